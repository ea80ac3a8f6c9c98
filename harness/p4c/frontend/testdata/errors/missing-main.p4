// expect: 4:1: error: program has no package instance named main (e.g. V1Switch(...) main;)
// Everything is declared, but the package is never instantiated.
#include "skeleton.p4"
control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
