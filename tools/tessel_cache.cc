// tessel-cache: inspect and maintain the tessel disk cache.
#include "tessel/warmup.h"

int main(int argc, char** argv) { return tessel::CacheToolMain(argc, argv); }
