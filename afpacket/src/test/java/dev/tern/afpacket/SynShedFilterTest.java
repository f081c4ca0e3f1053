package dev.tern.afpacket;

import dev.tern.ethernet.link.ShardSteering.Instruction;
import org.junit.jupiter.api.Test;

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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link SynShedFilter}'s programs without a kernel: instruction by instruction, and run over frames by a small
 * interpreter of the instructions they use (the kernel's rules: big-endian loads, relative jumps; a load past the
 * frame's end returns 0, here never reached).
 */
class SynShedFilterTest {
    private static final int A = 0xC6120042; // 198.18.0.66
    private static final int B = 0xC6120043;
    private static final int CLIENT = 0xC6120003;
    private static final int ACCEPT = 0xffffffff;

    /** The header of a program with one source and the random part: its accept is at 15. */
    private static final List<Instruction> HEADER = List.of(
        new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 12),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 15, 0x0800),
        new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 23),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 11, 6),
        new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 20),
        new Instruction(BPF_JMP | BPF_JSET | BPF_K, 9, 0, 0x1fff),
        new Instruction(BPF_LDX | BPF_B | BPF_MSH, 0, 0, 14),
        new Instruction(BPF_LD | BPF_B | BPF_IND, 0, 0, 27),
        new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16),
        new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0x02));

    @Test
    void theRandomProgramIsTheOneAttachedBefore() {
        assertEquals(List.of(
            new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 12),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 13, 0x0800),
            new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 23),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 6),
            new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, 20),
            new Instruction(BPF_JMP | BPF_JSET | BPF_K, 7, 0, 0x1fff),
            new Instruction(BPF_LDX | BPF_B | BPF_MSH, 0, 0, 14),
            new Instruction(BPF_LD | BPF_B | BPF_IND, 0, 0, 27),
            new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0x02),
            new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_RANDOM),
            new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, SynShedFilter.SAMPLE_MASK),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
            new Instruction(BPF_RET | BPF_K, 0, 0, ACCEPT),
            new Instruction(BPF_RET | BPF_K, 0, 0, 0),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 8, 0x86dd),
            new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 20),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 6, 6),
            new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, 67),
            new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x16),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0x02),
            new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_RANDOM),
            new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, SynShedFilter.SAMPLE_MASK),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
            new Instruction(BPF_RET | BPF_K, 0, 0, ACCEPT),
            new Instruction(BPF_RET | BPF_K, 0, 0, 0)), SynShedFilter.PROGRAM);
    }

    /**
     * IPv6: with the random part, seven in eight SYNs with TCP in the fixed header go, whatever the source list says;
     * SYN-ACKs, resets, SYNs behind an extension header and other protocols pass; by-source shedding alone passes them
     * all (the list holds IPv4 sources).
     */
    @Test
    void ipv6SynsAreShedAtRandomOnly() {
        final List<Instruction> random = SynShedFilter.program(new int[] {A}, 1, true);
        final List<Instruction> bySource = SynShedFilter.program(new int[] {A}, 1, false);
        int passed = 0;
        for (int draw = 0; draw < 64; draw++) {
            passed += run(random, frame6(6, 0x02), draw) == ACCEPT ? 1 : 0;
            assertEquals(ACCEPT, run(random, frame6(6, 0x12), draw), "a SYN-ACK");
            assertEquals(ACCEPT, run(random, frame6(6, 0x04), draw), "a reset");
            assertEquals(ACCEPT, run(random, frame6(60, 0x02), draw), "behind destination options");
            assertEquals(ACCEPT, run(random, frame6(17, 0x02), draw), "UDP");
            assertEquals(ACCEPT, run(bySource, frame6(6, 0x02), draw), "by source only");
            assertEquals(ACCEPT, run(SynShedFilter.PROGRAM, withEtherType(frame6(6, 0x02), 0x0806), draw), "ARP");
        }
        assertEquals(8, passed, "one in eight of 64 draws");
        assertEquals(12, SynShedFilter.program(new int[0], 0, false).size(), "no IPv6 part without the random one");
    }

    /** An Ethernet frame with an IPv6 header whose next header is {@code nextHeader}, then TCP flags at 14 + 40 + 13. */
    private static byte[] frame6(int nextHeader, int flags) {
        final byte[] f = new byte[14 + 40 + 20];
        f[12] = (byte) 0x86;
        f[13] = (byte) 0xdd;
        f[14] = 0x60;
        f[20] = (byte) nextHeader;
        f[14 + 40 + 13] = (byte) flags;
        return f;
    }

    private static byte[] withEtherType(byte[] frame, int etherType) {
        final byte[] copy = frame.clone();
        copy[12] = (byte) (etherType >>> 8);
        copy[13] = (byte) etherType;
        return copy;
    }

    @Test
    void twoSourcesWithoutTheRandomPart() {
        final List<Instruction> program = SynShedFilter.program(new int[] {A, B, CLIENT}, 2, false);
        // The header's jumps to accept land at 13, past the two tests of sources.
        assertEquals(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 11, 0x0800), program.get(1));
        assertEquals(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0x02), program.get(9));
        assertEquals(List.of(
            new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, 26),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, A),
            new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, B),
            new Instruction(BPF_RET | BPF_K, 0, 0, ACCEPT),
            new Instruction(BPF_RET | BPF_K, 0, 0, 0)), program.subList(10, 15));
    }

    @Test
    void oneSourceWithTheRandomPartMatchesTheHeaderAbove() {
        final List<Instruction> program = SynShedFilter.program(new int[] {A}, 1, true);
        assertEquals(HEADER, program.subList(0, 10));
        assertEquals(new Instruction(BPF_JMP | BPF_JEQ | BPF_K, 4, 0, A), program.get(11));
        assertEquals(17 + 11, program.size());
    }

    @Test
    void theListedSourcesSynsAreDroppedAndEveryoneElsePasses() {
        final List<Instruction> program = SynShedFilter.program(new int[] {A, B}, 2, false);
        for (int random = 0; random < 16; random++) {
            assertEquals(0, run(program, frame(A, 0x02), random), "a listed source's SYN");
            assertEquals(0, run(program, frame(B, 0x02), random));
            assertEquals(ACCEPT, run(program, frame(CLIENT, 0x02), random), "another source's SYN");
            assertEquals(ACCEPT, run(program, frame(A, 0x12), random), "a listed source's SYN-ACK");
            assertEquals(ACCEPT, run(program, frame(A, 0x10), random), "a listed source's ACK");
        }
    }

    @Test
    void withTheRandomPartOtherSourcesLoseSevenInEight() {
        final List<Instruction> program = SynShedFilter.program(new int[] {A}, 1, true);
        int passed = 0;
        for (int random = 0; random < 64; random++) {
            assertEquals(0, run(program, frame(A, 0x02), random));
            passed += run(program, frame(CLIENT, 0x02), random) == ACCEPT ? 1 : 0;
            assertEquals(ACCEPT, run(program, frame(CLIENT, 0x10), random));
        }
        assertEquals(8, passed);
    }

    @Test
    void moreThanEightSourcesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> SynShedFilter.program(new int[9], 9, false));
    }

    /** An Ethernet frame with an option-less IPv4 header from {@code source} and a TCP header with {@code flags}. */
    private static byte[] frame(int source, int flags) {
        final byte[] f = new byte[14 + 20 + 20];
        f[12] = 0x08;
        f[14] = 0x45;
        f[23] = 6;
        f[26] = (byte) (source >>> 24);
        f[27] = (byte) (source >>> 16);
        f[28] = (byte) (source >>> 8);
        f[29] = (byte) source;
        f[14 + 20 + 13] = (byte) flags;
        return f;
    }

    /** The instructions the programs use; {@code random} stands for the kernel's random u32. */
    private static int run(List<Instruction> program, byte[] frame, int random) {
        int a = 0;
        int x = 0;
        int pc = 0;
        while (true) {
            final Instruction i = program.get(pc++);
            final int code = i.code();
            if (code == (BPF_LD | BPF_H | BPF_ABS)) {
                a = (frame[i.k()] & 0xff) << 8 | frame[i.k() + 1] & 0xff;
            } else if (code == (BPF_LD | BPF_B | BPF_ABS)) {
                a = frame[i.k()] & 0xff;
            } else if (code == (BPF_LD | BPF_W | BPF_ABS)) {
                a = i.k() == SKF_AD_OFF + SKF_AD_RANDOM ? random : (frame[i.k()] & 0xff) << 24
                    | (frame[i.k() + 1] & 0xff) << 16 | (frame[i.k() + 2] & 0xff) << 8 | frame[i.k() + 3] & 0xff;
            } else if (code == (BPF_LDX | BPF_B | BPF_MSH)) {
                x = (frame[i.k()] & 0xf) * 4;
            } else if (code == (BPF_LD | BPF_B | BPF_IND)) {
                a = frame[x + i.k()] & 0xff;
            } else if (code == (BPF_ALU | BPF_AND | BPF_K)) {
                a &= i.k();
            } else if (code == (BPF_JMP | BPF_JEQ | BPF_K)) {
                pc += a == i.k() ? i.jt() : i.jf();
            } else if (code == (BPF_JMP | BPF_JSET | BPF_K)) {
                pc += (a & i.k()) != 0 ? i.jt() : i.jf();
            } else if (code == (BPF_RET | BPF_K)) {
                return i.k();
            } else {
                throw new AssertionError("instruction not interpreted: " + i);
            }
        }
    }
}
