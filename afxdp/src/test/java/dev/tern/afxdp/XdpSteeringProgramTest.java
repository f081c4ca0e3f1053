package dev.tern.afxdp;

import dev.tern.afxdp.sys.XdpAbi;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The steering program as assembled (the kernel's verifier checks it for real in the namespace tests): every jump
 * lands inside the program, the map descriptor is a two-slot pseudo load, and the constants are the wire bytes of
 * Tern's MAC and address as the program reads them (little-endian loads). Then the program run on frames
 * ({@link XdpInterpreter}): SYN shedding on crafted frames, and the verdict of a Java model of the pseudo-C in
 * {@link XdpSteering}'s comment on arbitrary frames, with no load outside the frame.
 */
class XdpSteeringProgramTest {
    private static final long MAC = 0x02_11_22_33_44_55L;
    private static final int ADDRESS = 0xC612_0002;     // 198.18.0.2
    private static final XdpSteering.Maps MAPS = new XdpSteering.Maps(7, 9, 11, 13, 15, 17);

    private static int code(long insn) {
        return (int) (insn & 0xFF);
    }

    private static int offset(long insn) {
        return (short) (insn >>> 16);
    }

    private static int immediate(long insn) {
        return (int) (insn >>> 32);
    }

    @Test
    void everyJumpLandsInsideTheProgramAndItEndsInExit() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        for (int pc = 0; pc < program.length; pc++) {
            final int cls = code(program[pc]) & 0x07;
            final boolean jump = (cls == 0x05 || cls == 0x06) && code(program[pc]) != 0x85 && code(program[pc]) != 0x95;
            if (jump) {
                final int target = pc + 1 + offset(program[pc]);
                assertTrue(target > pc && target < program.length, "jump at " + pc + " to " + target);
            }
        }
        assertEquals(0x95, code(program[program.length - 1]));
    }

    @Test
    void theMapIsLoadedByDescriptorAndTheRedirectFallsBackToPass() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        int load = -1;
        for (int pc = 0; pc < program.length; pc++) {
            if (code(program[pc]) == 0x18 && immediate(program[pc]) == 7) {
                load = pc;
            }
        }
        assertTrue(load > 0);
        assertEquals(XdpAbi.BPF_PSEUDO_MAP_FD, (int) (program[load] >>> 12) & 0xF, "src register names a map descriptor");
        assertEquals(7, immediate(program[load]));
        assertEquals(0, program[load + 1], "the second slot of the 64-bit load");
        assertEquals(XdpAbi.XDP_PASS, immediate(program[load + 2]), "r3 = XDP_PASS: no socket on the queue goes to the kernel");
        assertEquals(XdpAbi.BPF_FUNC_REDIRECT_MAP, immediate(program[load + 3]));
    }

    @Test
    void theComparedConstantsAreTheWireBytesReadLittleEndian() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        final java.util.List<Integer> compared = new java.util.ArrayList<>();
        for (long insn : program) {
            if (code(insn) == 0x56) {
                compared.add(immediate(insn));
            }
        }
        assertTrue(compared.contains(0x33_22_11_02), "bytes 02:11:22:33 of the MAC: " + compared);
        assertTrue(compared.contains(0x55_44), "bytes 44:55 of the MAC");
        assertTrue(compared.contains(0x0200_12C6), "198.18.0.2 as read from the frame");
        assertTrue(compared.contains(0x0008) && compared.contains(0x0608), "ethertypes IPv4 and ARP");
    }

    @Test
    void groupsAreLookedUpInTheirMapByMacBytes2To5ButNeverAllSystems() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        int lookup = -1;
        for (int pc = 0; pc < program.length; pc++) {
            if (code(program[pc]) == 0x18 && immediate(program[pc]) == 9) {
                lookup = pc;
            }
        }
        assertTrue(lookup > 0, "the group map is loaded");
        assertEquals(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM, immediate(program[lookup + 2]));
        assertEquals(0x0100_005E, XdpSteering.groupKey(0x01_00_5E_00_00_01L), "bytes 5e:00:00:01 read little-endian");
        assertEquals(0x0302_015E, XdpSteering.groupKey(0x01_00_5E_01_02_03L));
        boolean skipsAllSystems = false;
        for (long insn : program) {
            skipsAllSystems |= code(insn) == 0x16 && immediate(insn) == 0x0100_005E;
        }
        assertTrue(skipsAllSystems, "224.0.0.1's MAC always goes to the kernel");
    }

    // ---- the program run on frames ----

    private static final int KERNEL_ADDRESS = 0xC612_0003;
    private static final int SYN = 0x02;
    private static final int RST = 0x04;
    private static final int ACK = 0x10;
    private static final int REDIRECT = XdpInterpreter.XDP_REDIRECT;

    private static XdpInterpreter interpreter(boolean shedding, int random) {
        final XdpInterpreter interpreter = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), Set.of(), () -> random);
        interpreter.shedFlag = shedding ? 1 : 0;
        return interpreter;
    }

    private static void put(byte[] frame, int offset, long value, int bytes) {
        for (int i = 0; i < bytes; i++) {
            frame[offset + i] = (byte) (value >>> 8 * (bytes - 1 - i));
        }
    }

    /** Ethernet to Tern's MAC, IPv4 ({@code headerLength} bytes, options zero) to {@code address}, TCP with {@code flags}. */
    private static byte[] tcp(int address, int headerLength, int flags) {
        final byte[] frame = new byte[14 + headerLength + 20];
        put(frame, 0, MAC, 6);
        put(frame, 6, 0x02_00_00_00_00_01L, 6);
        put(frame, 12, 0x0800, 2);
        frame[14] = (byte) (0x40 | headerLength / 4);
        put(frame, 16, headerLength + 20, 2);
        frame[22] = 64;
        frame[23] = 6;
        put(frame, 26, 0xC612_0001L, 4);
        put(frame, 30, address, 4);
        frame[14 + headerLength + 13] = (byte) flags;
        return frame;
    }

    @Test
    void whileSheddingASynAloneIsDroppedAndCountedUnlessTheRandomNumbersLowThreeBitsAreZero() {
        for (int headerLength : new int[] {20, 24, 60}) {
            for (int random = 0; random < 16; random++) {
                final XdpInterpreter program = interpreter(true, random);
                final int expected = (random & XdpSteering.SHED_SAMPLE_MASK) == 0 ? REDIRECT : XdpAbi.XDP_DROP;
                assertEquals(expected, program.run(tcp(ADDRESS, headerLength, SYN)), "random " + random + ", IHL " + headerLength);
                assertEquals(expected == XdpAbi.XDP_DROP ? 1 : 0, program.shedCount);
            }
        }
    }

    @Test
    void withSheddingOffEverySynGoesToTernAndNoRandomNumberIsDrawn() {
        final XdpInterpreter program = interpreter(false, 1);
        assertEquals(REDIRECT, program.run(tcp(ADDRESS, 20, SYN)));
        assertEquals(REDIRECT, program.run(tcp(ADDRESS, 60, SYN)));
        assertEquals(0, program.randomCalls);
        assertEquals(0, program.shedCount);
    }

    @Test
    void whileSheddingEverythingButAConnectionOpeningSynGoesToTern() {
        final XdpInterpreter program = interpreter(true, 1);                 // a SYN would be dropped
        for (int flags : new int[] {ACK, SYN | ACK, RST, SYN | RST, RST | ACK, 0x18, 0x01, 0x11, 0}) {
            assertEquals(REDIRECT, program.run(tcp(ADDRESS, 20, flags)), "flags 0x" + Integer.toHexString(flags));
        }
        final byte[] udp = tcp(ADDRESS, 20, SYN);
        udp[23] = 17;
        assertEquals(REDIRECT, program.run(udp), "UDP whose byte 47 looks like a SYN");
        final byte[] laterFragment = tcp(ADDRESS, 20, SYN);
        put(laterFragment, 20, 0x0001, 2);                                   // offset 8 bytes: no TCP header here
        assertEquals(REDIRECT, program.run(laterFragment), "a later fragment");
        final byte[] farFragment = tcp(ADDRESS, 20, SYN);
        put(farFragment, 20, 0x1000, 2);
        assertEquals(REDIRECT, program.run(farFragment), "a fragment at offset 0x1000 words");
        final byte[] arp = new byte[42];
        put(arp, 0, 0xFF_FF_FF_FF_FF_FFL, 6);
        put(arp, 12, 0x0806, 2);
        put(arp, 38, ADDRESS, 4);
        assertEquals(REDIRECT, program.run(arp), "ARP asking for Tern's address");
        assertEquals(0, program.randomCalls, "no random number drawn for any of them");
        assertEquals(0, program.shedCount);

        final byte[] firstFragment = tcp(ADDRESS, 20, SYN);
        put(firstFragment, 20, 0x2000, 2);                                   // MF, offset 0: the TCP header is here
        assertEquals(XdpAbi.XDP_DROP, program.run(firstFragment), "a first fragment is shed like AF_PACKET's filter sheds it");
    }

    private static final int FLOODER = 0xC612_0001;                           // the source tcp() writes
    private static final int OTHER = 0xC612_004D;

    private static byte[] synFrom(int source) {
        final byte[] frame = tcp(ADDRESS, 20, SYN);
        put(frame, 26, source, 4);
        return frame;
    }

    private static XdpInterpreter bySource(int flags, int random) {
        final XdpInterpreter program = interpreter(false, random);
        program.shedFlag = flags;
        program.shedSources = Set.of(XdpSteering.sourceKey(FLOODER));
        return program;
    }

    @Test
    void sheddingBySourceDropsEveryListedSourcesSynAndPassesTheOthers() {
        XdpInterpreter program = bySource(XdpSteering.BY_SOURCE, 1);
        assertEquals(XdpAbi.XDP_DROP, program.run(synFrom(FLOODER)), "the listed source's SYN");
        assertEquals(1, program.shedCount);
        program = bySource(XdpSteering.BY_SOURCE, 1);
        assertEquals(REDIRECT, program.run(synFrom(OTHER)), "another source's SYN");
        assertEquals(0, program.shedCount);
        assertEquals(0, program.randomCalls, "no random number drawn without the random bit");
        program = bySource(XdpSteering.BY_SOURCE, 1);
        final byte[] ack = tcp(ADDRESS, 20, ACK);
        assertEquals(REDIRECT, program.run(ack), "the listed source's ACK");
        assertEquals(0, program.sourceLookups, "only a SYN is looked up");
    }

    @Test
    void withBothBitsAListedSourceIsDroppedWithoutADrawAndOthersLoseSevenInEight() {
        final int both = XdpSteering.BY_SOURCE | XdpSteering.AT_RANDOM;
        XdpInterpreter program = bySource(both, 0);
        assertEquals(XdpAbi.XDP_DROP, program.run(synFrom(FLOODER)));
        assertEquals(0, program.randomCalls);
        for (int random = 0; random < 16; random++) {
            program = bySource(both, random);
            final int expected = (random & XdpSteering.SHED_SAMPLE_MASK) == 0 ? REDIRECT : XdpAbi.XDP_DROP;
            assertEquals(expected, program.run(synFrom(OTHER)), "random " + random);
            assertEquals(1, program.sourceLookups);
        }
        program = bySource(XdpSteering.AT_RANDOM, 1);
        assertEquals(XdpAbi.XDP_DROP, program.run(synFrom(OTHER)));
        assertEquals(0, program.sourceLookups, "no lookup without the source bit");
    }

    @Test
    void aSourcesKeyIsItsWireBytesReadLittleEndian() {
        assertEquals(0x0100_12C6, XdpSteering.sourceKey(0xC612_0001), "198.18.0.1 as the program stores it");
    }

    @Test
    void whileSheddingASynForTheKernelsAddressIsTheKernels() {
        final XdpInterpreter program = interpreter(true, 1);
        assertEquals(XdpAbi.XDP_PASS, program.run(tcp(KERNEL_ADDRESS, 20, SYN)));
        assertEquals(0, program.randomCalls);
    }

    @Test
    void aSynCutBeforeItsFlagsGoesToTernUnshedAndNothingPastTheFrameIsRead() {
        for (int headerLength : new int[] {20, 60}) {
            final byte[] whole = tcp(ADDRESS, headerLength, SYN);
            for (int length = 34; length < 14 + headerLength + 14; length++) {
                final XdpInterpreter program = interpreter(true, 1);
                assertEquals(REDIRECT, program.run(java.util.Arrays.copyOf(whole, length)), "length " + length);
                assertEquals(0, program.randomCalls);
            }
            assertEquals(XdpAbi.XDP_DROP, interpreter(true, 1).run(java.util.Arrays.copyOf(whole, 14 + headerLength + 14)),
                "the flags are the last byte: enough");
        }
    }

    /** The pseudo-C of {@link XdpSteering}'s class comment, in Java, on one frame. */
    private static int model(byte[] f, Set<Integer> groups, int shedFlags, Set<Integer> sources, int random) {
        if (f.length < 14) {
            return XdpAbi.XDP_PASS;
        }
        final long destination = u(f, 0, 6);
        if (u(f, 0, 2) == 0x3333) {
            final boolean nd = u(f, 12, 2) == 0x86DD && f.length >= 78 && (f[20] & 0xFF) == 58
                && ((f[54] & 0xFF) == 135 || (f[54] & 0xFF) == 136);
            if (nd) {
                return ADDRESSES6.contains(hex(f, 62)) ? REDIRECT : XdpAbi.XDP_PASS;
            }
            if ((f[2] & 0xFF) == 0xFF || u(f, 2, 4) == 1) {
                return XdpAbi.XDP_PASS;
            }
            return groups.contains(Integer.reverseBytes((int) u(f, 2, 4))) ? REDIRECT : XdpAbi.XDP_PASS;
        }
        if (destination != MAC && destination != 0xFF_FF_FF_FF_FF_FFL) {
            if (u(f, 0, 2) != 0x0100 || u(f, 2, 4) == 0x5E00_0001L) {
                return XdpAbi.XDP_PASS;
            }
            return groups.contains(Integer.reverseBytes((int) u(f, 2, 4))) ? REDIRECT : XdpAbi.XDP_PASS;
        }
        final long ethertype = u(f, 12, 2);
        if (ethertype == 0x0800) {
            if (f.length < 34 || u(f, 30, 4) != Integer.toUnsignedLong(ADDRESS)) {
                return XdpAbi.XDP_PASS;
            }
            if (shedFlags == 0 || f[23] != 6 || (u(f, 20, 2) & 0x1FFF) != 0) {
                return REDIRECT;
            }
            final int tcp = 14 + 4 * (f[14] & 0x0F);
            if (f.length < tcp + 14 || (f[tcp + 13] & 0x16) != SYN) {
                return REDIRECT;
            }
            if ((shedFlags & XdpSteering.BY_SOURCE) != 0 && sources.contains(XdpSteering.sourceKey((int) u(f, 26, 4)))) {
                return XdpAbi.XDP_DROP;
            }
            if ((shedFlags & XdpSteering.AT_RANDOM) == 0 || (random & 7) == 0) {
                return REDIRECT;
            }
            return XdpAbi.XDP_DROP;
        }
        if (ethertype == 0x0806 && f.length >= 42 && u(f, 38, 4) == Integer.toUnsignedLong(ADDRESS)) {
            return REDIRECT;
        }
        if (ethertype == 0x86DD && f.length >= 54 && ADDRESSES6.contains(hex(f, 38))) {
            if ((shedFlags & XdpSteering.AT_RANDOM) == 0 || f.length < 68 || f[20] != 6 || (f[67] & 0x16) != SYN
                || (random & 7) == 0) {
                return REDIRECT;
            }
            return XdpAbi.XDP_DROP;
        }
        return XdpAbi.XDP_PASS;
    }

    /** 16 bytes of {@code f} from {@code offset}, as hex: a key of the IPv6 address map. */
    private static String hex(byte[] f, int offset) {
        return java.util.HexFormat.of().formatHex(f, offset, offset + 16);
    }

    /** Tern's IPv6 addresses in the program's map: a global one and a link-local one. */
    private static final byte[] GLOBAL6 = java.util.HexFormat.of().parseHex("20010db8000000000000000000000002");
    private static final byte[] LINK_LOCAL6 = java.util.HexFormat.of().parseHex("fe80000000000000a1b2c3d4e5f60718");
    private static final Set<String> ADDRESSES6 = Set.of(hex(GLOBAL6, 0), hex(LINK_LOCAL6, 0));
    /** An address on the same link that is the kernel's, not Tern's. */
    private static final byte[] KERNEL6 = java.util.HexFormat.of().parseHex("20010db8000000000000000000000003");

    private static long u(byte[] f, int offset, int bytes) {
        long value = 0;
        for (int i = 0; i < bytes; i++) {
            value = value << 8 | (f[offset + i] & 0xFF);
        }
        return value;
    }

    @Test
    void onArbitraryFramesTheProgramAgreesWithTheModelAndReadsOnlyInsideTheFrame() {
        final long seed = System.nanoTime();
        final Random rng = new Random(seed);
        final Set<Integer> groups = Set.of(XdpSteering.groupKey(0x01_00_5E_01_02_03L),
            XdpSteering.groupKey(0x33_33_00_01_00_02L), XdpSteering.groupKey(0x33_33_FF_00_00_02L),
            XdpSteering.groupKey(0x33_33_00_00_00_01L));
        int dropped = 0;
        int redirected = 0;
        for (int i = 0; i < 20_000; i++) {
            final byte[] f = new byte[rng.nextInt(100)];
            rng.nextBytes(f);
            // Steer most frames down the interesting paths: Tern's MAC, IPv4 or ARP, Tern's address, TCP, SYN.
            if (f.length >= 6 && rng.nextInt(8) > 0) {
                put(f, 0, rng.nextInt(8) == 0 ? 0x01_00_5E_01_02_03L : MAC, 6);
            }
            if (f.length >= 14 && rng.nextInt(8) > 0) {
                put(f, 12, rng.nextInt(4) == 0 ? 0x0806 : 0x0800, 2);
            }
            if (f.length >= 42 && rng.nextBoolean()) {
                put(f, 38, ADDRESS, 4);
            }
            if (f.length >= 34 && rng.nextInt(8) > 0) {
                put(f, 30, ADDRESS, 4);
                if (rng.nextInt(8) > 0) {
                    f[23] = 6;
                }
                if (rng.nextInt(4) > 0) {
                    f[20] &= (byte) 0xE0;                                    // not a later fragment; MF as it came
                    f[21] = 0;
                }
                if (rng.nextInt(4) > 0) {
                    f[14] = (byte) (0x40 | 5 + rng.nextInt(3));              // mostly headers the frame holds
                }
            }
            if (f.length >= 14 && rng.nextInt(4) == 0) {                      // IPv6: unicast or ND to a group
                final boolean multicast = rng.nextBoolean();
                final long[] groupMacs = {0x33_33_FF_00_00_02L, 0x33_33_00_00_00_01L, 0x33_33_00_01_00_02L,
                    0x33_33_00_01_00_03L};
                put(f, 0, multicast ? groupMacs[rng.nextInt(groupMacs.length)] : MAC, 6);
                put(f, 12, rng.nextInt(8) > 0 ? 0x86DD : 0x0800, 2);
                final byte[][] choices = {GLOBAL6, LINK_LOCAL6, KERNEL6};
                if (f.length >= 54 && rng.nextInt(4) > 0) {
                    System.arraycopy(choices[rng.nextInt(3)], 0, f, 38, 16);
                }
                if (f.length >= 55 && rng.nextInt(4) > 0) {
                    f[20] = (byte) (rng.nextInt(8) > 0 ? 58 : 0);
                    f[54] = (byte) (rng.nextInt(8) > 0 ? 135 + rng.nextInt(2) : 134);
                } else if (f.length >= 68 && rng.nextBoolean()) {
                    f[20] = 6; // TCP, often a connection-opening SYN
                    f[67] = (byte) (rng.nextBoolean() ? SYN : f[67]);
                }
                if (f.length >= 78 && rng.nextInt(4) > 0) {
                    System.arraycopy(choices[rng.nextInt(3)], 0, f, 62, 16);
                }
            }
            final int tcp = f.length > 14 ? 14 + 4 * (f[14] & 0x0F) : 0;
            if (f.length > tcp + 13 && tcp > 0 && rng.nextBoolean()) {
                f[tcp + 13] = (byte) (rng.nextBoolean() ? SYN : f[tcp + 13]);
            }
            if (f.length >= 30 && rng.nextBoolean()) {
                put(f, 26, rng.nextBoolean() ? FLOODER : OTHER, 4);
            }
            final int shedding = rng.nextInt(4);
            final int random = rng.nextInt();
            final Set<Integer> sources = Set.of(XdpSteering.sourceKey(FLOODER));
            final XdpInterpreter program = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), groups, () -> random);
            program.shedFlag = shedding;
            program.shedSources = sources;
            program.addresses6 = ADDRESSES6;
            final int verdict;
            try {
                verdict = program.run(f);
            } catch (IllegalStateException e) {
                throw new AssertionError("seed " + seed + ", frame " + java.util.HexFormat.of().formatHex(f) + ": " + e.getMessage(), e);
            }
            assertEquals(model(f, groups, shedding, sources, random), verdict, "seed " + seed + ", shedding " + shedding + ", random "
                + random + ", frame " + java.util.HexFormat.of().formatHex(f));
            assertEquals(verdict == XdpAbi.XDP_DROP ? 1 : 0, program.shedCount);
            dropped += verdict == XdpAbi.XDP_DROP ? 1 : 0;
            redirected += verdict == REDIRECT ? 1 : 0;
        }
        System.out.printf("steering program on 20,000 arbitrary frames: %d dropped, %d redirected, the rest passed%n",
            dropped, redirected);
        assertTrue(dropped > 100, "the drop path was exercised: " + dropped + " (seed " + seed + ")");
    }

    /** An IPv6 frame to {@code mac}: next header {@code nextHeader} to {@code destination}, then an ICMPv6 {@code type} about {@code target}. */
    private static byte[] ipv6(long mac, byte[] destination, int nextHeader, int type, byte[] target) {
        final byte[] frame = new byte[14 + 40 + 24];
        put(frame, 0, mac, 6);
        put(frame, 6, 0x02_00_00_00_00_01L, 6);
        put(frame, 12, 0x86DD, 2);
        frame[14] = 0x60;
        put(frame, 18, 24, 2);
        frame[20] = (byte) nextHeader;
        frame[21] = (byte) 255;
        System.arraycopy(destination, 0, frame, 38, 16);
        frame[54] = (byte) type;
        System.arraycopy(target, 0, frame, 62, 16);
        return frame;
    }

    /** The group map as the stack fills it: all-nodes and a solicited-node group (ND's), and ff0e::1:2 (an application's). */
    private static final Set<Integer> IPV6_GROUPS = Set.of(XdpSteering.groupKey(0x33_33_00_00_00_01L),
        XdpSteering.groupKey(0x33_33_FF_00_00_02L), XdpSteering.groupKey(0x33_33_00_01_00_02L));

    private static int steer(byte[] frame) {
        final XdpInterpreter program = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), IPV6_GROUPS,
            () -> 0);
        program.addresses6 = ADDRESSES6;
        return program.run(frame);
    }

    /**
     * IPv6 on an interface the kernel shares: unicast to Tern's addresses (global and link-local) goes to Tern, to
     * the kernel's stays; of multicast, only solicitations and advertisements whose target is Tern's (resolution and
     * DAD for its addresses) go to Tern, and router advertisements, MLD queries and ND about the kernel's addresses
     * stay the kernel's, as does ND behind an extension header; a group an application joined is Tern's, while
     * all-nodes and the solicited-node groups, which ND puts in the group map too, stay shared.
     */
    @Test
    void ipv6GoesToTernForItsAddressesAndNdAboutThemAndEverythingElseToTheKernel() {
        final long solicitedNode = 0x33_33_FF_00_00_02L;
        final long allNodes = 0x33_33_00_00_00_01L;
        final byte[] solicitedNodeGroup = java.util.HexFormat.of().parseHex("ff0200000000000000000001ff000002");
        final byte[] allNodesGroup = java.util.HexFormat.of().parseHex("ff020000000000000000000000000001");
        assertEquals(REDIRECT, steer(ipv6(MAC, GLOBAL6, 58, 128, KERNEL6)), "an echo request to Tern's address");
        assertEquals(REDIRECT, steer(ipv6(MAC, LINK_LOCAL6, 6, 0, KERNEL6)), "TCP to Tern's link-local address");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(MAC, KERNEL6, 58, 128, GLOBAL6)), "an echo request to the kernel's");
        assertEquals(REDIRECT, steer(ipv6(solicitedNode, solicitedNodeGroup, 58, 135, GLOBAL6)),
            "a solicitation for Tern's address");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(solicitedNode, solicitedNodeGroup, 58, 135, KERNEL6)),
            "a solicitation for the kernel's address, in a group both share");
        assertEquals(REDIRECT, steer(ipv6(allNodes, allNodesGroup, 58, 136, GLOBAL6)),
            "an advertisement defending Tern's tentative address (DAD)");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(allNodes, allNodesGroup, 58, 134, GLOBAL6)), "a router advertisement");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(allNodes, allNodesGroup, 58, 130, GLOBAL6)), "an MLD query");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(solicitedNode, solicitedNodeGroup, 0, 135, GLOBAL6)),
            "ND behind a hop-by-hop header");
        final byte[] applicationGroup = java.util.HexFormat.of().parseHex("ff0e0000000000000000000000010002");
        assertEquals(REDIRECT, steer(ipv6(0x33_33_00_01_00_02L, applicationGroup, 17, 0, KERNEL6)),
            "a datagram to a group Tern joined");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(0x33_33_00_01_00_03L, applicationGroup, 17, 0, KERNEL6)),
            "a group Tern did not join");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(solicitedNode, solicitedNodeGroup, 17, 0, KERNEL6)),
            "not ND, to a solicited-node group in the map: shared with the kernel");
        assertEquals(XdpAbi.XDP_PASS, steer(ipv6(allNodes, allNodesGroup, 17, 0, KERNEL6)),
            "not ND, to all nodes in the map");
        final byte[] solicitation = ipv6(solicitedNode, solicitedNodeGroup, 58, 135, GLOBAL6);
        for (int length = 14; length < solicitation.length; length++) {
            assertEquals(XdpAbi.XDP_PASS, steer(java.util.Arrays.copyOf(solicitation, length)),
                "cut to " + length + " bytes: the target is not all there");
        }
        final byte[] unicast = ipv6(MAC, GLOBAL6, 58, 128, KERNEL6);
        for (int length = 14; length < 54; length++) {
            assertEquals(XdpAbi.XDP_PASS, steer(java.util.Arrays.copyOf(unicast, length)), "cut to " + length);
        }
        assertEquals(REDIRECT, steer(java.util.Arrays.copyOf(unicast, 54)), "a bare header: the stack counts it");
    }

    /**
     * While the random filter is on, seven in eight IPv6 SYNs to Tern's addresses are dropped and counted; by-source
     * shedding alone drops none (its map holds IPv4 sources); a SYN behind an extension header, a SYN-ACK, a reset and
     * a SYN to the kernel's address pass as always.
     */
    @Test
    void ipv6SynsToTernAreShedAtRandomOnly() {
        final byte[] syn = ipv6(MAC, GLOBAL6, 6, 0, KERNEL6);
        syn[14 + 40 + 13] = SYN;
        for (int random = 0; random < 16; random++) {
            final XdpInterpreter program = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), Set.of(),
                () -> 0);
            final int draw = random;
            final XdpInterpreter drawn = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), Set.of(),
                () -> draw);
            drawn.addresses6 = ADDRESSES6;
            drawn.shedFlag = XdpSteering.AT_RANDOM;
            assertEquals((random & 7) == 0 ? REDIRECT : XdpAbi.XDP_DROP, drawn.run(syn), "draw " + random);
            assertEquals((random & 7) == 0 ? 0 : 1, drawn.shedCount);
            program.addresses6 = ADDRESSES6;
            program.shedFlag = XdpSteering.BY_SOURCE;
            program.shedSources = Set.of(XdpSteering.sourceKey(0xC612_0001));
            assertEquals(REDIRECT, program.run(syn), "by source only: IPv6 SYNs pass");
        }
        final XdpInterpreter shedding = new XdpInterpreter(MAPS, XdpSteering.program(MAPS, MAC, ADDRESS), Set.of(),
            () -> 1);
        shedding.addresses6 = ADDRESSES6;
        shedding.shedFlag = XdpSteering.AT_RANDOM;
        final byte[] synAck = syn.clone();
        synAck[14 + 40 + 13] = SYN | ACK;
        final byte[] reset = syn.clone();
        reset[14 + 40 + 13] = RST;
        final byte[] behindOptions = syn.clone();
        behindOptions[20] = 60;
        final byte[] toTheKernel = ipv6(MAC, KERNEL6, 6, 0, KERNEL6);
        toTheKernel[14 + 40 + 13] = SYN;
        assertEquals(REDIRECT, shedding.run(synAck), "a SYN-ACK");
        assertEquals(REDIRECT, shedding.run(reset), "a reset");
        assertEquals(REDIRECT, shedding.run(behindOptions), "behind a destination options header");
        assertEquals(XdpAbi.XDP_PASS, shedding.run(toTheKernel), "the kernel's");
        assertEquals(REDIRECT, shedding.run(java.util.Arrays.copyOf(syn, 14 + 40 + 13)), "flags cut off");
        assertEquals(XdpAbi.XDP_DROP, shedding.run(syn));
        assertEquals(1, shedding.shedCount);
    }

    @Test
    void anUndefinedLabelIsAnError() {
        final XdpSteering.Assembler a = new XdpSteering.Assembler();
        a.ja("nowhere");
        assertThrows(IllegalStateException.class, a::assemble);
    }
}
