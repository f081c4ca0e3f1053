package dev.tern.afpacket;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The classic BPF socket filter an {@link AfPacketLink} attaches while its stack sheds load
 * ({@link AfPacketLink#shedUnsolicitedSyns}): it drops, in the kernel and before the receive ring, seven in eight IPv4
 * TCP segments that carry SYN without ACK or RST (connection openings: a SYN flood's whole content), chosen at random,
 * and passes every other frame. A flood then costs the stack an eighth of the ring slots and cycles it would, and
 * established connections keep the ring; a client that opens a connection meanwhile gets through with each eighth
 * SYN on average (its retries at 1, 3, 7, 15 ... s), answered with a SYN cookie if the SYN queue is full.
 *
 * <pre>
 *  0  ldh [12]                  EtherType (a VLAN tag is out of band on receive: veth and NICs strip it)
 *  1  jeq #0x0800, 0, 8         not IPv4: accept
 *  2  ldb [23]                  IPv4 protocol
 *  3  jeq #6, 0, 6              not TCP: accept
 *  4  ldh [20]                  flags and fragment offset
 *  5  jset #0x1fff, 4, 0        a later fragment (no TCP header): accept
 *  6  ldxb 4*([14]&0xf)         X = IPv4 header length
 *  7  ldb [x+27]                TCP flags (14 + 13)
 *  8  and #0x16                 SYN | RST | ACK
 *  9  jeq #0x02, 0, 3           not SYN alone: accept
 * 10  ld rand                   a random u32 (the kernel's ancillary load SKF_AD_RANDOM)
 * 11  and #7
 * 12  jeq #0, 0, 1              one in eight: accept, else drop
 * 13  ret #0xffffffff           accept the whole frame
 * 14  ret #0                    drop
 * </pre>
 * Each instruction is a {@code struct sock_filter} ({@code linux/filter.h}): u16 code, u8 jt, u8 jf, u32 k; the
 * program goes to {@code SO_ATTACH_FILTER} in a {@code struct sock_fprog} (u16 length, then a pointer at offset 8).
 */
final class SynShedFilter {
    static final int SOL_SOCKET = 1;
    static final int SO_ATTACH_FILTER = 26;
    static final int SO_DETACH_FILTER = 27;
    static final int SOCK_FPROG_SIZE = 16;

    /** {@code SKF_AD_OFF + SKF_AD_RANDOM} ({@code linux/filter.h}): an absolute load there yields a random u32. */
    static final int RANDOM_LOAD = -0x1000 + 56;
    /** One SYN in {@code SAMPLE_MASK + 1} passes the filter. */
    static final int SAMPLE_MASK = 7;

    private static final int LD_W_ABS = 0x20;
    private static final int LDH_ABS = 0x28;
    private static final int LDB_ABS = 0x30;
    private static final int LDXB_MSH = 0xb1;
    private static final int LDB_IND = 0x50;
    private static final int JEQ_K = 0x15;
    private static final int JSET_K = 0x45;
    private static final int AND_K = 0x54;
    private static final int RET_K = 0x06;

    /** The program above, instruction by instruction: code, jt, jf, k. */
    static final int[][] PROGRAM = {
        {LDH_ABS, 0, 0, 12},
        {JEQ_K, 0, 11, 0x0800},
        {LDB_ABS, 0, 0, 23},
        {JEQ_K, 0, 9, 6},
        {LDH_ABS, 0, 0, 20},
        {JSET_K, 7, 0, 0x1fff},
        {LDXB_MSH, 0, 0, 14},
        {LDB_IND, 0, 0, 27},
        {AND_K, 0, 0, 0x16},
        {JEQ_K, 0, 3, 0x02},
        {LD_W_ABS, 0, 0, RANDOM_LOAD},
        {AND_K, 0, 0, SAMPLE_MASK},
        {JEQ_K, 0, 1, 0},
        {RET_K, 0, 0, 0xffffffff},
        {RET_K, 0, 0, 0},
    };

    private SynShedFilter() {
    }

    /** A {@code struct sock_fprog} pointing at the program, both in {@code arena}. */
    static MemorySegment program(Arena arena) {
        final MemorySegment instructions = arena.allocate(8L * PROGRAM.length, 8);
        for (int i = 0; i < PROGRAM.length; i++) {
            final long at = 8L * i;
            instructions.set(ValueLayout.JAVA_SHORT, at, (short) PROGRAM[i][0]);
            instructions.set(ValueLayout.JAVA_BYTE, at + 2, (byte) PROGRAM[i][1]);
            instructions.set(ValueLayout.JAVA_BYTE, at + 3, (byte) PROGRAM[i][2]);
            instructions.set(ValueLayout.JAVA_INT, at + 4, PROGRAM[i][3]);
        }
        final MemorySegment fprog = arena.allocate(SOCK_FPROG_SIZE, 8);
        fprog.set(ValueLayout.JAVA_SHORT, 0, (short) PROGRAM.length);
        fprog.set(ValueLayout.ADDRESS, 8, instructions);
        return fprog;
    }
}
