package dev.tern.afxdp;

import dev.tern.afxdp.sys.XdpAbi;

import java.util.Set;
import java.util.function.IntSupplier;

/**
 * Runs the steering program on one frame, for tests: the eBPF instructions {@link XdpSteering.Assembler} emits
 * (loads, stores, 64-bit ALU with immediate or register, jumps and 32-bit jumps, the 64-bit map loads, the atomic
 * add, calls, exit), with the maps and helpers played in Java. Written from the kernel's eBPF instruction-set
 * document. It checks at run time what the verifier checks before: every load from the frame lies inside it, and
 * nothing is read through a pointer the program may not use; a breach throws.
 *
 * <p>A pointer is a region tag in the high bits and an offset in the low 32. The context's {@code data} and
 * {@code data_end} load as such pointers (the kernel rewrites those loads likewise).
 *
 * <p>Not thread-safe; one per test.
 */
final class XdpInterpreter {
    static final int XDP_REDIRECT = 4;
    private static final long REGION = 1L << 32;
    private static final long CONTEXT = 1 * REGION;
    private static final long FRAME = 2 * REGION;
    private static final long STACK = 3 * REGION;
    private static final long SHED_FLAG = 4 * REGION;
    private static final long SHED_COUNT = 5 * REGION;
    private static final long MAP_DESCRIPTOR = 6 * REGION;
    private static final int STACK_SIZE = 512;

    private final XdpSteering.Maps maps;
    private final long[] program;
    private final Set<Integer> groups;
    private final IntSupplier random;
    int shedFlag;
    long shedCount;
    int randomCalls;
    /** The keys in the map of sources whose SYNs are shed ({@link XdpSteering#sourceKey}). */
    Set<Integer> shedSources = Set.of();
    int sourceLookups;
    /** The keys in the map of Tern's IPv6 addresses: 16 bytes in wire order, as hex. */
    Set<String> addresses6 = Set.of();
    int address6Lookups;

    XdpInterpreter(XdpSteering.Maps maps, long[] program, Set<Integer> groups, IntSupplier random) {
        this.maps = maps;
        this.program = program;
        this.groups = groups;
        this.random = random;
    }

    /** The program's verdict for {@code frame}: {@link XdpAbi#XDP_PASS}, {@link XdpAbi#XDP_DROP} or {@link #XDP_REDIRECT}. */
    int run(byte[] frame) {
        final long[] r = new long[11];
        final byte[] stack = new byte[STACK_SIZE];
        r[1] = CONTEXT;
        r[10] = STACK + STACK_SIZE;
        int pc = 0;
        for (int steps = 0; steps < 10_000; steps++) {
            final long insn = program[pc++];
            final int code = (int) (insn & 0xFF);
            final int dst = (int) (insn >>> 8) & 0xF;
            final int src = (int) (insn >>> 12) & 0xF;
            final int offset = (short) (insn >>> 16);
            final int immediate = (int) (insn >>> 32);
            switch (code) {
                case 0x61 -> r[dst] = load(r[src] + offset, 4, frame, stack);
                case 0x69 -> r[dst] = load(r[src] + offset, 2, frame, stack);
                case 0x71 -> r[dst] = load(r[src] + offset, 1, frame, stack);
                case 0x63 -> store(r[dst] + offset, (int) r[src], stack);
                case 0xdb -> {
                    if (immediate != XdpAbi.BPF_ADD || r[dst] + offset != SHED_COUNT) {
                        throw new IllegalStateException("atomic op " + immediate + " at " + Long.toHexString(r[dst] + offset));
                    }
                    shedCount += r[src];
                }
                case 0xbf -> r[dst] = r[src];
                case 0xb7 -> r[dst] = immediate;
                case 0x07 -> r[dst] += immediate;
                case 0x0f -> r[dst] += scalar(r[src]);
                case 0x57 -> r[dst] &= immediate;
                case 0x67 -> r[dst] <<= immediate;
                case 0x18 -> {
                    r[dst] = switch (src) {
                        case XdpAbi.BPF_PSEUDO_MAP_FD -> MAP_DESCRIPTOR + immediate;
                        case XdpAbi.BPF_PSEUDO_MAP_VALUE -> immediate == maps.shedFlag() ? SHED_FLAG
                            : immediate == maps.shedCount() ? SHED_COUNT : fail("no array " + immediate);
                        default -> fail("64-bit load kind " + src);
                    } + (int) (program[pc] >>> 32);
                    pc++;
                }
                case 0x05 -> pc += offset;
                case 0x2d -> pc += Long.compareUnsigned(r[dst], r[src]) > 0 ? offset : 0;
                case 0x15 -> pc += r[dst] == immediate ? offset : 0;
                case 0x55 -> pc += r[dst] != immediate ? offset : 0;
                case 0x16 -> pc += (int) r[dst] == immediate ? offset : 0;
                case 0x56 -> pc += (int) r[dst] != immediate ? offset : 0;
                case 0x45 -> pc += (r[dst] & immediate) != 0 ? offset : 0;
                case 0x85 -> {
                    r[0] = call(immediate, r, frame, stack);
                    for (int i = 1; i <= 5; i++) {
                        r[i] = 0xDEAD_0000L + i;                         // clobbered by the call
                    }
                }
                case 0x95 -> {
                    return (int) r[0];
                }
                default -> throw new IllegalStateException("instruction 0x" + Integer.toHexString(code) + " at " + (pc - 1));
            }
        }
        throw new IllegalStateException("no exit after 10,000 steps");
    }

    private long call(int helper, long[] r, byte[] frame, byte[] stack) {
        return switch (helper) {
            case XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM -> {
                if (r[1] == MAP_DESCRIPTOR + maps.addresses6()) {
                    // A 16-byte key, which the verifier lets the program pass as a pointer into the frame.
                    final StringBuilder key = new StringBuilder();
                    for (int i = 0; i < 16; i++) {
                        key.append(String.format("%02x", load(r[2] + i, 1, frame, stack)));
                    }
                    address6Lookups++;
                    yield addresses6.contains(key.toString()) ? STACK : 0;
                }
                final int key = (int) load(r[2], 4, new byte[0], stack);
                if (r[1] == MAP_DESCRIPTOR + maps.groups()) {
                    yield groups.contains(key) ? STACK : 0;                   // any non-null pointer
                }
                if (r[1] == MAP_DESCRIPTOR + maps.shedSources()) {
                    sourceLookups++;
                    yield shedSources.contains(key) ? STACK : 0;
                }
                throw new IllegalStateException("lookup in map " + (r[1] - MAP_DESCRIPTOR));
            }
            case XdpAbi.BPF_FUNC_GET_PRANDOM_U32 -> {
                randomCalls++;
                yield Integer.toUnsignedLong(random.getAsInt());
            }
            case XdpAbi.BPF_FUNC_REDIRECT_MAP -> {
                if (r[1] != MAP_DESCRIPTOR + maps.xsks() || r[2] != 0 || r[3] != XdpAbi.XDP_PASS) {
                    throw new IllegalStateException("redirect through " + (r[1] - MAP_DESCRIPTOR) + " key " + r[2]);
                }
                yield XDP_REDIRECT;
            }
            default -> throw new IllegalStateException("helper " + helper);
        };
    }

    private long load(long address, int size, byte[] frame, byte[] stack) {
        if (address == CONTEXT + XdpAbi.XDP_MD_DATA && size == 4) {
            return FRAME;
        }
        if (address == CONTEXT + XdpAbi.XDP_MD_DATA_END && size == 4) {
            return FRAME + frame.length;
        }
        if (address == CONTEXT + XdpAbi.XDP_MD_RX_QUEUE_INDEX && size == 4) {
            return 0;
        }
        if (address == SHED_FLAG && size == 4) {
            return Integer.toUnsignedLong(shedFlag);
        }
        final byte[] memory = address >= FRAME && address < FRAME + REGION ? frame
            : address >= STACK && address < STACK + REGION ? stack : null;
        final long at = address & (REGION - 1);
        if (memory == null || at + size > memory.length) {
            throw new IllegalStateException("load of " + size + " bytes at " + Long.toHexString(address) + ", frame of "
                + frame.length);
        }
        long value = 0;
        for (int i = size - 1; i >= 0; i--) {
            value = value << 8 | (memory[(int) at + i] & 0xFF);               // little-endian, as the kernel loads
        }
        return value;
    }

    private static void store(long address, int value, byte[] stack) {
        final long at = address - STACK;
        if (at < 0 || at + 4 > STACK_SIZE) {
            throw new IllegalStateException("store at " + Long.toHexString(address));
        }
        for (int i = 0; i < 4; i++) {
            stack[(int) at + i] = (byte) (value >>> 8 * i);
        }
    }

    private static long scalar(long value) {
        if (value >= REGION) {
            throw new IllegalStateException("pointer added to a pointer");
        }
        return value;
    }

    private static long fail(String message) {
        throw new IllegalStateException(message);
    }
}
