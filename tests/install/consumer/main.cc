// A host application that links the installed tessel.
#include <iostream>

#include "tessel/version.h"

int main() {
  std::cout << "linked tessel " << tessel::version() << "\n";
  return tessel::version().empty() ? 1 : 0;
}
