/* core.p4 of the grid embedded P4 compiler.
 *
 * Declares the P4_16 core library with the same names, types and
 * signatures as the core.p4 shipped with p4c, so programs written for p4c
 * compile unchanged. Written for the grid project.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Errors the parser can signal; programs may add members with their own
 * error declarations. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* The packet being parsed. */
extern packet_in {
    /* Read a fixed-size header from the packet and make it valid. */
    void extract<T>(out T hdr);
    /* Read a header whose single varbit field is variableFieldSizeInBits long. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read the next bits as a T without consuming them. */
    T lookahead<T>();
    /* Skip sizeInBits bits. */
    void advance(in bit<32> sizeInBits);
    /* The packet length in bytes. */
    bit<32> length();
}

/* The packet being assembled by a deparser. */
extern packet_out {
    /* Append hdr if it is valid (for structs and stacks: each valid header in order). */
    void emit<T>(in T hdr);
}

/* In a parser: when check is false, stop parsing with error toSignal. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing; the default of every table without one. */
@noWarn("unused")
action NoAction() {}

/* The standard match kinds. */
match_kind {
    exact,
    ternary,
    lpm
}

/* Compile-time assertions. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif /* _CORE_P4_ */
