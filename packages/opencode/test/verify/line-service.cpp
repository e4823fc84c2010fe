// A small TCP line service for the service probe's tests: for every line it reads it answers one line
// (default "PONG"), and closes the connection when the client does. Flags plant the faults the probe must
// name: a service that never listens, one on another port, one that exits, one that crashes on its Nth request line,
// one that talks without end, one that tries to reach an address outside its namespace.
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

static bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int main(int argc, char** argv) {
  int port = 7000;
  std::string reply = "PONG";
  long listen_delay_ms = 0;
  int exit_before_listen = -1;
  long crash_on_line = 0;
  long lines_read = 0;
  long chatty_bytes = 0;
  std::string connect_out;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--port") port = std::atoi(value);
    else if (flag == "--reply") reply = value;
    else if (flag == "--listen-delay-ms") listen_delay_ms = std::atol(value);
    else if (flag == "--exit-before-listen") exit_before_listen = std::atoi(value);
    else if (flag == "--crash-on-line") crash_on_line = std::atol(value);
    else if (flag == "--chatty-bytes") chatty_bytes = std::atol(value);
    else if (flag == "--connect-out") connect_out = value;
  }
  std::fprintf(stderr, "line-service starting (port %d)\n", port);
  if (!connect_out.empty()) {
    // "address:port": try once, say what happened, and serve anyway.
    std::string address = connect_out.substr(0, connect_out.find(':'));
    int out_port = std::atoi(connect_out.substr(connect_out.find(':') + 1).c_str());
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(out_port));
    inet_pton(AF_INET, address.c_str(), &to.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) std::fprintf(stderr, "connected to %s\n", connect_out.c_str());
    else std::fprintf(stderr, "connect to %s failed: %s\n", connect_out.c_str(), std::strerror(errno));
    close(fd);
  }
  if (exit_before_listen >= 0) {
    std::fprintf(stderr, "configuration broken, exiting with %d\n", exit_before_listen);
    return exit_before_listen;
  }
  if (listen_delay_ms > 0) usleep(static_cast<useconds_t>(listen_delay_ms) * 1000);

  int server = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(server, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || listen(server, 16) != 0) {
    std::fprintf(stderr, "cannot listen on %d: %s\n", port, std::strerror(errno));
    return 2;
  }
  std::fprintf(stderr, "listening on 127.0.0.1:%d\n", port);
  const std::string line_out = reply + "\n";
  for (;;) {
    int client = accept(server, nullptr, nullptr);
    if (client < 0) continue;
    if (chatty_bytes > 0) {
      std::string chunk(4096, 'x');
      for (size_t i = 63; i < chunk.size(); i += 64) chunk[i] = '\n';
      for (long sent = 0; sent < chatty_bytes; sent += static_cast<long>(chunk.size()))
        if (!send_all(client, chunk.data(), chunk.size())) break;
    }
    std::string pending;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(client, buffer, sizeof buffer, 0)) > 0) {
      pending.append(buffer, static_cast<size_t>(n));
      size_t end;
      while ((end = pending.find('\n')) != std::string::npos) {
        pending.erase(0, end + 1);
        if (++lines_read == crash_on_line) {
          std::fprintf(stderr, "crashing on a request\n");
          std::raise(SIGSEGV);
        }
        send_all(client, line_out.data(), line_out.size());
      }
    }
    close(client);
  }
}
