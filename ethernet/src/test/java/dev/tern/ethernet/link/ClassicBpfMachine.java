package dev.tern.ethernet.link;

import dev.tern.ethernet.link.ShardSteering.Instruction;

import java.util.List;

import static dev.tern.ethernet.link.ShardSteering.*;

/**
 * A classic BPF interpreter for the instructions {@link ShardSteering#fanoutProgram} uses, with the kernel's rules
 * for them: loads are big-endian; a load outside the packet ends the program with 0; {@code SKF_NET_OFF} loads are
 * relative to the network header (here: after the 14-byte Ethernet header); {@code SKF_AD_PROTOCOL} is the
 * EtherType; jumps compare unsigned; {@code MOD} is unsigned. Anything else fails the test (the interpreter does not
 * guess). Written from linux/filter.h and the kernel's filter documentation, to check the program without a kernel.
 */
final class ClassicBpfMachine {
    private static final int ETHERNET_HEADER = 14;

    private ClassicBpfMachine() {
    }

    /** Runs {@code program} on the Ethernet frame {@code frame}; returns what the program returns. */
    static int run(List<Instruction> program, byte[] frame) {
        int a = 0;
        int x = 0;
        final int[] memory = new int[16];
        int pc = 0;
        while (true) {
            if (pc >= program.size()) {
                throw new AssertionError("fell off the end of the program");
            }
            final Instruction i = program.get(pc++);
            final int code = i.code();
            switch (code & 0x07) {
                case BPF_LD -> {
                    final int mode = code & 0xE0;
                    final int size = code & 0x18;
                    if (mode == BPF_ABS && i.k() == SKF_AD_OFF + SKF_AD_PROTOCOL) {
                        if (frame.length < ETHERNET_HEADER) {
                            return 0;
                        }
                        a = (frame[12] & 0xFF) << 8 | frame[13] & 0xFF;
                        break;
                    }
                    final long offset;
                    if (mode == BPF_ABS) {
                        offset = i.k();
                    } else if (mode == BPF_IND) {
                        offset = (long) x + i.k();
                    } else {
                        throw new AssertionError("load mode " + mode + " not modelled");
                    }
                    final Long value = load(frame, offset, size == BPF_W ? 4 : size == BPF_H ? 2 : 1);
                    if (value == null) {
                        return 0;
                    }
                    a = (int) (long) value;
                }
                case BPF_LDX -> {
                    if ((code & 0xE0) != BPF_MEM) {
                        throw new AssertionError("ldx mode not modelled: " + code);
                    }
                    x = memory[i.k()];
                }
                case BPF_ST -> memory[i.k()] = a;
                case BPF_ALU -> {
                    final int operand = (code & BPF_X) != 0 ? x : i.k();
                    a = switch (code & 0xF0) {
                        case BPF_MUL -> a * operand;
                        case BPF_AND -> a & operand;
                        case BPF_LSH -> a << operand;
                        case BPF_RSH -> a >>> operand;
                        case BPF_MOD -> Integer.remainderUnsigned(a, operand);
                        case BPF_XOR -> a ^ operand;
                        default -> throw new AssertionError("alu op not modelled: " + code);
                    };
                }
                case BPF_JMP -> {
                    if ((code & 0xF0) == BPF_JA) {
                        pc += i.k();
                        break;
                    }
                    final boolean taken = switch (code & 0xF0) {
                        case BPF_JEQ -> a == i.k();
                        case BPF_JGE -> Integer.compareUnsigned(a, i.k()) >= 0;
                        case BPF_JSET -> (a & i.k()) != 0;
                        default -> throw new AssertionError("jump not modelled: " + code);
                    };
                    pc += taken ? i.jt() : i.jf();
                }
                case BPF_RET -> {
                    return (code & 0x18) == BPF_A ? a : i.k();
                }
                case BPF_MISC -> {
                    if ((code & 0xF8) != BPF_TAX) {
                        throw new AssertionError("misc op not modelled: " + code);
                    }
                    x = a;
                }
                default -> throw new AssertionError("class not modelled: " + code);
            }
        }
    }

    /** A big-endian load of {@code size} bytes at a BPF offset; null when outside the packet. */
    private static Long load(byte[] frame, long offset, int size) {
        final long start;
        if (offset >= SKF_NET_OFF && offset < SKF_AD_OFF) {
            start = ETHERNET_HEADER + (offset - SKF_NET_OFF);
        } else {
            throw new AssertionError("negative offset not modelled: " + offset);
        }
        if (start < 0 || start + size > frame.length) {
            return null;
        }
        long value = 0;
        for (int b = 0; b < size; b++) {
            value = value << 8 | frame[(int) start + b] & 0xFF;
        }
        return value;
    }
}
