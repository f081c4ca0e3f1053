package dev.tern.afpacket;

import dev.tern.ethernet.link.ShardSteering.Instruction;

import java.util.ArrayList;
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
 * and IPv6 TCP segments that carry SYN without ACK or RST (connection openings: a SYN flood's whole content), chosen at random,
 * and passes every other frame. A flood then costs the stack an eighth of the ring slots and cycles it would, and
 * established connections keep the ring; a client that opens a connection meanwhile gets through with each eighth
 * SYN on average (its retries at 1, 3, 7, 15 ... s), answered with a SYN cookie if the SYN queue is full.
 *
 * <pre>
 *  0  ldh [12]                  EtherType (a VLAN tag is out of band on receive: veth and NICs strip it)
 *  1  jeq #0x0800, 0, 13        not IPv4: the IPv6 part at 15
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
 * 15  jeq #0x86dd, 0, 8         not IPv6 either: accept
 * 16  ldb [20]                  next header (an extension header is not walked: the SYN behind it passes)
 * 17  jeq #6, 0, 6              not TCP: accept
 * 18  ldb [67]                  TCP flags (14 + 40 + 13)
 * 19  and #0x16
 * 20  jeq #0x02, 0, 3           not SYN alone: accept
 * 21  ld rand
 * 22  and #7
 * 23  jeq #0, 0, 1              one in eight: accept, else drop
 * 24  ret #0xffffffff
 * 25  ret #0
 * </pre>
 * The IPv6 part is there only with the random part: the sources below are IPv4 addresses, so by-source shedding
 * alone passes IPv6 SYNs.
 * When a few sources carry the flood ({@link AfPacketLink#shedSynsFrom}), {@link #program} puts a test of each
 * source before the random part, so that their SYNs all go and other sources' SYNs pass (classic BPF has no maps: a
 * list of constants, at most eight, rebuilt when the list changes):
 * <pre>
 * 10  ld [26]                   IPv4 source
 * 11  jeq #SOURCE_1, DROP, 0    ... one per source
 *     then the random part above, or, without it, accept
 * </pre>
 * The instructions are {@link dev.tern.ethernet.link.ShardSteering}'s (the shards' fanout program is the other
 * classic BPF program);
 * {@link SocketFilters} lays them out for {@code SO_ATTACH_FILTER}.
 */
final class SynShedFilter {
    /** One SYN in {@code SAMPLE_MASK + 1} passes the filter. */
    static final int SAMPLE_MASK = 7;

    /** The instructions of the IPv6 part, after the IPv4 program's drop (only with the random part). */
    private static final int IPV6_PART = 11;

    /** The most sources {@link #program} tests. */
    static final int MAX_SOURCES = 8;

    /** The program above: the random part only. */
    static final List<Instruction> PROGRAM = program(new int[0], 0, true);

    /**
     * The filter that drops every SYN from the first {@code count} of {@code sources} and, when {@code atRandom},
     * seven in eight of the other SYNs. Cold path.
     */
    static List<Instruction> program(int[] sources, int count, boolean atRandom) {
        if (count < 0 || count > MAX_SOURCES || count > sources.length) {
            throw new IllegalArgumentException("between 0 and " + MAX_SOURCES + " sources, was " + count);
        }
        final int header = 10;
        final int sourceTests = count == 0 ? 0 : 1 + count;
        final int accept = header + sourceTests + (atRandom ? 3 : 0);
        final int drop = accept + 1;
        final List<Instruction> program = new ArrayList<>(drop + 1 + (atRandom ? IPV6_PART : 0));
        program.add(new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 12));
        // Not IPv4: the IPv6 part after drop when shedding at random (IPv6 sources are never listed), else accept.
        program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, (atRandom ? drop + 1 : accept) - 2, 0x0800));
        program.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 23));
        program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, accept - 4, 6));
        program.add(new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 20));
        program.add(new Instruction(BPF_JMP | BPF_JSET | BPF_K, accept - 6, 0, 0x1fff));
        program.add(new Instruction(BPF_LDX | BPF_B | BPF_MSH, 0, 0, 14));
        program.add(new Instruction(BPF_LD | BPF_B | BPF_IND, 0, 0, 27));
        program.add(new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16));
        program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, accept - 10, 0x02));
        if (count > 0) {
            program.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, 26));
            for (int i = 0; i < count; i++) {
                program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, drop - program.size() - 1, 0, sources[i]));
            }
        }
        if (atRandom) {
            addRandomPart(program);
        }
        addAcceptAndDrop(program);
        if (atRandom) {
            // A is still the EtherType. An IPv6 SYN with TCP in the fixed header: seven in eight dropped.
            program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 8, 0x86dd));
            program.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 14 + 6));
            program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 6, 6));
            program.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 14 + 40 + 13));
            program.add(new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16));
            program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0x02));
            addRandomPart(program);
            addAcceptAndDrop(program);
        }
        return List.copyOf(program);
    }

    /** A random u32 (the kernel's ancillary load); one in eight goes on to accept, the rest to drop after it. */
    private static void addRandomPart(List<Instruction> program) {
        program.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_RANDOM));
        program.add(new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, SAMPLE_MASK));
        program.add(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
    }

    private static void addAcceptAndDrop(List<Instruction> program) {
        program.add(new Instruction(BPF_RET | BPF_K, 0, 0, 0xffffffff));
        program.add(new Instruction(BPF_RET | BPF_K, 0, 0, 0));
    }

    private SynShedFilter() {
    }
}
