// tessel-warmup: the warmup tool with tessel's own registered kernels.
#include "tessel/warmup.h"

int main(int argc, char** argv) { return tessel::WarmupMain(argc, argv); }
