// expect: 4:1: error: #error "TARGET must be defined"
#include "skeleton.p4"
#ifndef TARGET
#error "TARGET must be defined"
#endif
