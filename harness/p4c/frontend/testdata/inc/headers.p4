// Included through Options.IncludeDirs by TestLoadHonoursIncludeDirsAndDefines.
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct H { eth_t eth; }
struct M { bit<32> idx; bit<8> v; }
