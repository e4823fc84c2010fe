// The test program of ui-capture.test.ts, built with g++ and Xlib by the test.
// Usage: xwindow MODE [BACKGROUND FOREGROUND TITLE]
//   draw      one 320x240 window in BACKGROUND with a 100x60 FOREGROUND rectangle at its centre, titled TITLE
//   blank     the same window mapped, never drawn (the server paints its black background)
//   nowindow  never opens a window: sleeps ten minutes
//   crash     connects to the display, then raises SIGSEGV
//   ten       ten drawn windows of different sizes
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

static unsigned long colour(const char* hex) { return std::strtoul(hex[0] == '#' ? hex + 1 : hex, nullptr, 16); }

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "draw";
  const char* bg = argc > 2 ? argv[2] : "#3366cc";
  const char* fg = argc > 3 ? argv[3] : "#ff8000";
  const char* title = argc > 4 ? argv[4] : "AirCoding test window";
  if (mode == "nowindow") {
    std::puts("not opening any window");
    std::fflush(stdout);
    sleep(600);
    return 0;
  }
  Display* display = XOpenDisplay(nullptr);
  if (!display) {
    std::fprintf(stderr, "cannot open display %s\n", std::getenv("DISPLAY") ? std::getenv("DISPLAY") : "(unset)");
    return 2;
  }
  if (mode == "crash") {
    std::fprintf(stderr, "about to crash\n");
    std::raise(SIGSEGV);
  }
  const int screen = DefaultScreen(display);
  const bool blank = mode == "blank";
  const int count = mode == "ten" ? 10 : 1;
  std::vector<Window> windows;
  for (int i = 0; i < count; i++) {
    const unsigned w = 320 + 20 * i, h = 240 + 10 * i;
    Window window = XCreateSimpleWindow(display, RootWindow(display, screen), 0, 0, w, h, 0, 0, blank ? BlackPixel(display, screen) : colour(bg));
    std::string name = count == 1 ? std::string(title) : std::string(title) + " " + std::to_string(i + 1);
    XStoreName(display, window, name.c_str());
    XSelectInput(display, window, ExposureMask);
    XMapWindow(display, window);
    windows.push_back(window);
  }
  GC gc = XCreateGC(display, windows[0], 0, nullptr);
  XSetForeground(display, gc, colour(fg));
  std::printf("mapped %d window(s)\n", count);
  std::fflush(stdout);
  for (;;) {
    XEvent event;
    XNextEvent(display, &event);
    if (event.type == Expose && !blank) {
      XWindowAttributes a;
      XGetWindowAttributes(display, event.xexpose.window, &a);
      XFillRectangle(display, event.xexpose.window, gc, a.width / 2 - 50, a.height / 2 - 30, 100, 60);
      XFlush(display);
    }
  }
}
