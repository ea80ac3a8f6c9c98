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
// checked *ast.Program or an error that is a *diag.List. Compile returns
// the program together with every diagnostic, warnings included.
//
// What a checked program guarantees (TestCheckedCorpusProgramsHaveEverySlotFilled
// verifies it on the whole conformance corpus):
//
//   - Every expression has Info().Type, except a Call's Fun (see ast.Call)
//     and the type name left of `.` in Enum.Member / error.Name.
//   - Every Ident has Decl; every Member has a Kind; every Call has a Kind
//     and its callee slot (Action, Function, ExternFunc, Method, Table,
//     Builtin, Ctor) and ArgParams.
//   - When Info().Const is set, it is the value of the whole expression,
//     already wrapped to Info().Type: use it instead of evaluating the
//     sub-expressions. An expression of type *ast.IntLitType always has a
//     Const (infinite-precision literals reach back ends only as constants,
//     e.g. as arguments bound to a generic parameter such as hash's base).
//   - Integer literals combined with a bit<W>/int<W> operand, assigned, or
//     passed to a typed parameter have been given that type.
//   - A serializable enum value may appear where its underlying bit<W> is
//     expected (P4's implicit conversion); its Type stays the *ast.EnumDecl
//     and a constant's Const.Int holds the number.
//   - Compound assignments (x += e) have been rewritten to x = x + e.
//   - Header unions, varbit and for loops are reported unsupported unless
//     Options.Features enables them (the back end must then lower them;
//     p4c.Compile enables all three, since the midend lowers them).
package frontend
