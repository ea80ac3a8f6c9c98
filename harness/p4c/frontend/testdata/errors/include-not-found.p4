// expect: 2:10: error: cannot find include file headers.p4
#include "headers.p4"
