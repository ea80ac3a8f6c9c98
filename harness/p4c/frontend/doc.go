// Package frontend turns P4_16 source files into a checked syntax tree.
//
// Pipeline and where things live:
//
//   - harness/p4c/include: our own core.p4 and v1model.p4 (same interface
//     as p4c's), embedded; #include <core.p4> and <v1model.p4> resolve there.
//   - frontend/diag: diagnostics (file:line:col: error: msg, source line,
//     caret), collected in a diag.List.
//   - frontend/lexer: tokens with positions.
//   - frontend/preproc: the C-like preprocessor working on tokens
//     (#include, #define incl. function-like macros, #undef, #if/#ifdef/
//     #ifndef/#elif/#else/#endif, #error); every token keeps the file, line
//     and column it came from (macro expansions take the use site).
//   - frontend/parser: recursive-descent parser producing package ast.
//   - frontend/ast: the tree; ExprInfo / Resolved() / Ident.Decl etc. are
//     the slots the checker fills.
//   - frontend/check: name resolution, type checking, constant folding;
//     constructs outside the compiler's subset are reported as
//     "unsupported: ...".
//
// Back ends call Load (file) or LoadSource (in-memory text); both return the
// checked *ast.Program or an error that is a diag.List.
package frontend
