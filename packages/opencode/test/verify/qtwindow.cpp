// The Qt Widgets program of ui-capture.test.ts, under Xvfb (xcb): a 320x240 window in BACKGROUND with a
// 100x60 child widget in FOREGROUND at its centre. Usage: qtwindow BACKGROUND FOREGROUND TITLE
#include <QApplication>
#include <QPalette>
#include <QWidget>

static void paint(QWidget& widget, const char* colour) {
  QPalette palette = widget.palette();
  palette.setColor(QPalette::Window, QColor(colour));
  widget.setPalette(palette);
  widget.setAutoFillBackground(true);
}

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QWidget window;
  window.setWindowTitle(argc > 3 ? argv[3] : "AirCoding Qt window");
  window.resize(320, 240);
  paint(window, argc > 1 ? argv[1] : "#33cc66");
  QWidget inner(&window);
  inner.setGeometry(110, 90, 100, 60);
  paint(inner, argc > 2 ? argv[2] : "#ff8000");
  window.show();
  return app.exec();
}
