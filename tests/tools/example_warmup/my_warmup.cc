// docs/warmup.md's example: a host application's own warmup binary.
#include <tessel/warmup.h>

int main(int argc, char** argv) { return tessel::WarmupMain(argc, argv); }
