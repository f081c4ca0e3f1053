package dev.tern.afpacket;

import dev.tern.ethernet.link.ShardSteering.Instruction;

import java.util.List;

import static dev.tern.ethernet.link.ShardSteering.BPF_ABS;
import static dev.tern.ethernet.link.ShardSteering.BPF_ALU;
import static dev.tern.ethernet.link.ShardSteering.BPF_AND;
import static dev.tern.ethernet.link.ShardSteering.BPF_B;
import static dev.tern.ethernet.link.ShardSteering.BPF_H;
import static dev.tern.ethernet.link.ShardSteering.BPF_IND;
import static dev.tern.ethernet.link.ShardSteering.BPF_JEQ;
import static dev.tern.ethernet.link.ShardSteering.BPF_JMP;
import static dev.tern.ethernet.link.ShardSteering.BPF_JSET;
import static dev.tern.ethernet.link.ShardSteering.BPF_K;
import static dev.tern.ethernet.link.ShardSteering.BPF_LD;
import static dev.tern.ethernet.link.ShardSteering.BPF_LDX;
import static dev.tern.ethernet.link.ShardSteering.BPF_MSH;
import static dev.tern.ethernet.link.ShardSteering.BPF_RET;
import static dev.tern.ethernet.link.ShardSteering.BPF_W;
import static dev.tern.ethernet.link.ShardSteering.SKF_AD_OFF;
import static dev.tern.ethernet.link.ShardSteering.SKF_AD_RANDOM;

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
 * The instructions are {@link dev.tern.ethernet.link.ShardSteering}'s (the shards' fanout program is the other
 * classic BPF program);
 * {@link SocketFilters} lays them out for {@code SO_ATTACH_FILTER}.
 */
final class SynShedFilter {
    /** One SYN in {@code SAMPLE_MASK + 1} passes the filter. */
    static final int SAMPLE_MASK = 7;

    /** The program above. */
    static final List<Instruction> PROGRAM = List.of(
        new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 12),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 11, 0x0800),
        new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 23),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 6),
        new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 20),
        new Instruction(BPF_JMP | BPF_JSET | BPF_K, 7, 0, 0x1fff),
        new Instruction(BPF_LDX | BPF_B | BPF_MSH, 0, 0, 14),
        new Instruction(BPF_LD | BPF_B | BPF_IND, 0, 0, 27),
        new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0x02),
        new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_RANDOM),
        new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, SAMPLE_MASK),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        new Instruction(BPF_RET | BPF_K, 0, 0, 0xffffffff),
        new Instruction(BPF_RET | BPF_K, 0, 0, 0));

    private SynShedFilter() {
    }
}
