package dev.tern.ethernet.link;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/**
 * The Java steering function and the classic BPF fanout program built from it agree, frame for frame: crafted frames
 * of every kind the rule names, then arbitrary ones (QuickTheories). The program runs on {@link ClassicBpfMachine};
 * the veth test ({@code ShardedStackVethTest} in conformance) runs it in the kernel.
 */
class ShardSteeringTest {
    private static final int PEER = 0xC612_0001;   // 198.18.0.1
    private static final int US = 0xC612_0002;     // 198.18.0.2

    /** An Ethernet + IPv4 frame carrying {@code protocol} with ports, {@code optionWords} words of IP options. */
    static byte[] ipv4Frame(int protocol, int source, int destination, int sourcePort, int destinationPort,
                            int fragmentField, int optionWords, int payload) {
        final int ihl = 5 + optionWords;
        final ByteBuffer b = ByteBuffer.allocate(14 + ihl * 4 + 8 + payload);
        b.put(new byte[] {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}).putShort((short) 0x0800);
        b.put((byte) (0x40 | ihl)).put((byte) 0).putShort((short) (ihl * 4 + 8 + payload)).putShort((short) 1)
            .putShort((short) fragmentField).put((byte) 64).put((byte) protocol).putShort((short) 0)
            .putInt(source).putInt(destination);
        for (int i = 0; i < optionWords; i++) {
            b.putInt(0x0101_0101); // NOPs
        }
        b.putShort((short) sourcePort).putShort((short) destinationPort);
        return b.array();
    }

    static int javaShard(byte[] frame, int shards) {
        return ShardSteering.shardOf(MemorySegment.ofArray(frame), 0, frame.length, shards);
    }

    static int kernelShard(byte[] frame, int shards) {
        return ClassicBpfMachine.run(ShardSteering.fanoutProgram(shards), frame);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 8})
    void tcpAndUdpFramesGoToTheShardOfTheirFourTupleInJavaAndInTheProgram(int shards) {
        for (int protocol : new int[] {6, 17}) {
            for (int port = 40000; port < 40200; port++) {
                final byte[] frame = ipv4Frame(protocol, PEER, US, port, 80, 0, 0, 10);
                final int expected = ShardSteering.shardOf(PEER, US, port, 80, shards);
                assertEquals(expected, javaShard(frame, shards), "java, port " + port);
                assertEquals(expected, kernelShard(frame, shards), "program, port " + port);
            }
        }
    }

    @Test
    void optionsMoveThePortsAndBothSidesFollowTheHeaderLength() {
        for (int words = 0; words <= 10; words++) {
            final byte[] frame = ipv4Frame(6, PEER, US, 51234, 443, 0, words, 0);
            final int expected = ShardSteering.shardOf(PEER, US, 51234, 443, 4);
            assertEquals(expected, javaShard(frame, 4));
            assertEquals(expected, kernelShard(frame, 4));
        }
    }

    @Test
    void everythingThatIsNotUnicastTcpOrUdpWithItsPortsGoesToShardZero() {
        // Find a flow that hashes away from shard 0, so a 0 means the rule, not the hash.
        int port = 40000;
        while (ShardSteering.shardOf(PEER, US, port, 80, 2) == 0) {
            port++;
        }
        final byte[] tcp = ipv4Frame(6, PEER, US, port, 80, 0, 0, 0);
        assertEquals(1, javaShard(tcp, 2));
        assertEquals(1, kernelShard(tcp, 2));
        final List<byte[]> shardZero = List.of(
            ipv4Frame(1, PEER, US, port, 80, 0, 0, 0),                  // ICMP
            ipv4Frame(2, PEER, US, port, 80, 0, 0, 0),                  // IGMP
            ipv4Frame(6, PEER, US, port, 80, 0x0001, 0, 0),             // a non-first fragment
            ipv4Frame(17, PEER, US, port, 80, 0x2000, 0, 0),            // a first fragment (MF, offset 0)
            ipv4Frame(17, PEER, 0xE000_00FB, port, 80, 0, 0, 0),        // multicast
            ipv4Frame(17, PEER, 0xFFFF_FFFF, port, 80, 0, 0, 0),        // limited broadcast
            withEtherType(tcp, 0x0806),                                 // ARP
            withEtherType(tcp, 0x8100),                                 // VLAN-tagged
            java.util.Arrays.copyOf(tcp, 14 + 20 + 2),                  // ports cut off
            java.util.Arrays.copyOf(tcp, 14 + 19),                      // IPv4 header cut off
            java.util.Arrays.copyOf(tcp, 10));                          // not even an Ethernet header
        for (byte[] frame : shardZero) {
            assertEquals(0, javaShard(frame, 2), "java");
            assertEquals(0, kernelShard(frame, 2), "program");
        }
        // DF is no fragment: the flow keeps its shard.
        final byte[] dontFragment = ipv4Frame(6, PEER, US, port, 80, 0x4000, 0, 0);
        assertEquals(1, javaShard(dontFragment, 2));
        assertEquals(1, kernelShard(dontFragment, 2));
    }

    private static byte[] withEtherType(byte[] frame, int etherType) {
        final byte[] copy = frame.clone();
        copy[12] = (byte) (etherType >>> 8);
        copy[13] = (byte) etherType;
        return copy;
    }

    @Test
    void theProgramAndJavaAgreeOnArbitraryFrames() {
        qt().withExamples(20_000).forAll(integers().all(), integers().between(1, 9), integers().between(0, 120))
            .checkAssert((seed, shards, length) -> {
                final SplittableRandom random = new SplittableRandom(seed);
                final byte[] frame = new byte[length];
                random.nextBytes(frame);
                // Steer most frames into the interesting part of the rule: IPv4, TCP or UDP, often unfragmented.
                if (length > 13 && random.nextInt(8) != 0) {
                    frame[12] = 0x08;
                    frame[13] = 0x00;
                }
                if (length > 23 && random.nextInt(8) != 0) {
                    frame[23] = (byte) (random.nextBoolean() ? 6 : 17);
                }
                if (length > 21 && random.nextBoolean()) {
                    frame[20] &= (byte) 0xC0;
                    frame[21] = 0;
                }
                if (length > 30 && random.nextBoolean()) {
                    frame[30] &= 0x7F;
                }
                assertEquals(kernelShard(frame, shards), javaShard(frame, shards),
                    "seed " + seed + ", " + shards + " shards, " + length + " bytes");
                assertTrue(javaShard(frame, shards) < shards);
            });
    }

    @Test
    void sourcePortsSpreadEvenlyOverTwoShards() {
        int first = 0;
        for (int port = 32768; port < 60999; port++) {
            first += ShardSteering.shardOf(PEER, US, port, 80, 2) == 0 ? 1 : 0;
        }
        final double share = first / (double) (60999 - 32768);
        assertTrue(share > 0.45 && share < 0.55, "shard 0's share of the kernel's ephemeral ports: " + share);
    }

    @Test
    void oneShardIsAlwaysShardZero() {
        final byte[] tcp = ipv4Frame(6, PEER, US, 40001, 80, 0, 0, 0);
        assertEquals(0, javaShard(tcp, 1));
        assertEquals(0, kernelShard(tcp, 1));
    }

    /**
     * An ICMP message of {@code type} from the peer quoting a datagram we sent (source us, destination the peer) of
     * {@code quotedProtocol} with our port {@code ourPort} and the peer's {@code peerPort}.
     */
    static byte[] icmpErrorFrame(int type, int quotedProtocol, int ourPort, int peerPort, int quotedFragmentField) {
        final ByteBuffer b = ByteBuffer.allocate(14 + 20 + 8 + 20 + 8);
        b.put(new byte[] {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}).putShort((short) 0x0800);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (20 + 8 + 28)).putShort((short) 1).putShort((short) 0)
            .put((byte) 64).put((byte) 1).putShort((short) 0).putInt(PEER).putInt(US);
        b.put((byte) type).put((byte) 3).putShort((short) 0).putInt(0);
        b.put((byte) 0x45).put((byte) 0).putShort((short) 28).putShort((short) 7).putShort((short) quotedFragmentField)
            .put((byte) 64).put((byte) quotedProtocol).putShort((short) 0).putInt(US).putInt(PEER);
        b.putShort((short) ourPort).putShort((short) peerPort).putInt(0);
        return b.array();
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 4, 11, 12})
    void anIcmpErrorBelongsToTheShardOfTheFlowItQuotesSeenFromThePeer(int type) {
        for (int shards : new int[] {2, 3, 8}) {
            for (int protocol : new int[] {6, 17}) {
                for (int peerPort = 40000; peerPort < 40100; peerPort++) {
                    final byte[] frame = icmpErrorFrame(type, protocol, 80, peerPort, 0);
                    final MemorySegment segment = MemorySegment.ofArray(frame);
                    assertEquals(0, ShardSteering.shardOf(segment, 0, frame.length, shards), "ICMP itself reaches 0");
                    assertEquals(ShardSteering.shardOf(PEER, US, peerPort, 80, shards),
                        ShardSteering.icmpShardOf(segment, 0, frame.length, shards), "the peer's packets' shard");
                }
            }
        }
    }

    @Test
    void icmpThatNamesNoFlowStaysOnShardZero() {
        int differing = 0;
        for (int peerPort = 40000; peerPort < 40100; peerPort++) {
            final byte[] redirect = icmpErrorFrame(5, 6, 80, peerPort, 0);
            final byte[] quotesIcmp = icmpErrorFrame(3, 1, 80, peerPort, 0);
            final byte[] quotesLaterFragment = icmpErrorFrame(3, 17, 80, peerPort, 0x2001);
            final byte[] tooShort = java.util.Arrays.copyOf(icmpErrorFrame(3, 6, 80, peerPort, 0), 14 + 20 + 8 + 20 + 2);
            for (byte[] frame : List.of(redirect, quotesIcmp, quotesLaterFragment, tooShort)) {
                assertEquals(0, ShardSteering.icmpShardOf(MemorySegment.ofArray(frame), 0, frame.length, 4));
            }
            final byte[] counted = icmpErrorFrame(3, 6, 80, peerPort, 0);
            differing += ShardSteering.icmpShardOf(MemorySegment.ofArray(counted), 0, counted.length, 4) != 0 ? 1 : 0;
        }
        assertTrue(differing > 50, "the same errors quoting a whole TCP header do move: " + differing + " of 100");
        final byte[] tcp = ipv4Frame(6, PEER, US, 40001, 80, 0, 0, 0);
        assertEquals(0, ShardSteering.icmpShardOf(MemorySegment.ofArray(tcp), 0, tcp.length, 4), "not ICMP");
    }

    @Test
    void anEchoIdentifierNamesItsShardAndStaysASixteenBitValue() {
        qt().forAll(integers().all(), integers().between(1, 256)).checkAssert((candidate, shards) -> {
            for (int shard : new int[] {0, shards - 1, shards / 2}) {
                final int identifier = ShardSteering.echoIdentifier(candidate, shard, shards);
                assertTrue(identifier >= 0 && identifier <= 0xFFFF, "16 bits: " + identifier);
                assertEquals(shard, identifier % shards, "names shard " + shard + " of " + shards);
            }
        });
    }

    // ------------------------------------------------------------------------------------------------ IPv6

    /** 2001:db8::1, the peer, and 2001:db8::2, us. */
    private static final long DOC_HIGH = 0x2001_0db8_0000_0000L;
    private static final long PEER6_LOW = 1;
    private static final long US6_LOW = 2;

    /** An Ethernet + IPv6 frame: fixed header with {@code nextHeader}, hop limit {@code hopLimit}, then the ports. */
    static byte[] ipv6Frame(int nextHeader, int hopLimit, long sourceHigh, long sourceLow, long destinationHigh,
                            long destinationLow, int sourcePort, int destinationPort, int payload) {
        final ByteBuffer b = ByteBuffer.allocate(14 + 40 + 8 + payload);
        b.put(new byte[] {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}).putShort((short) 0x86DD);
        b.putInt(0x6000_0000).putShort((short) (8 + payload)).put((byte) nextHeader).put((byte) hopLimit)
            .putLong(sourceHigh).putLong(sourceLow).putLong(destinationHigh).putLong(destinationLow);
        b.putShort((short) sourcePort).putShort((short) destinationPort);
        return b.array();
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 8})
    void ipv6TcpAndUdpGoToTheShardOfTheirFoldedFourTupleInJavaAndInTheProgram(int shards) {
        final int[] seen = new int[shards];
        for (int protocol : new int[] {6, 17}) {
            for (int port = 40000; port < 40200; port++) {
                final long peerHigh = DOC_HIGH | port; // a different /64 per port: every address word moves the hash
                final byte[] frame = ipv6Frame(protocol, 64, peerHigh, PEER6_LOW * port, DOC_HIGH, US6_LOW, port, 80, 10);
                final int expected = ShardSteering.shardOf6(ShardRule.FLOW_HASH, peerHigh, PEER6_LOW * port, DOC_HIGH,
                    US6_LOW, port, 80, shards);
                assertEquals(expected, javaShard(frame, shards), "java, port " + port);
                assertEquals(expected, kernelShard(frame, shards), "program, port " + port);
                seen[expected]++;
            }
        }
        for (int k = 0; k < shards; k++) {
            assertTrue(seen[k] > 0, "shard " + k + " gets IPv6 flows too");
        }
    }

    @Test
    void theFoldIsTheXorOfTheFourWordsAndEveryBitCounts() {
        assertEquals(0x2001_0db8 ^ 0 ^ 0 ^ 2, ShardSteering.fold(DOC_HIGH, US6_LOW));
        for (int bit = 0; bit < 64; bit++) {
            assertTrue(ShardSteering.fold(DOC_HIGH ^ 1L << bit, US6_LOW) != ShardSteering.fold(DOC_HIGH, US6_LOW));
            assertTrue(ShardSteering.fold(DOC_HIGH, US6_LOW ^ 1L << bit) != ShardSteering.fold(DOC_HIGH, US6_LOW));
        }
    }

    @Test
    void ipv6ThatTheProgramCannotHashGoesToShardZero() {
        int port = 40000;
        while (ShardSteering.shardOf6(ShardRule.FLOW_HASH, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 2) == 0) {
            port++;
        }
        final byte[] tcp = ipv6Frame(6, 64, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 0);
        assertEquals(1, javaShard(tcp, 2));
        assertEquals(1, kernelShard(tcp, 2));
        final List<byte[]> shardZero = List.of(
            ipv6Frame(58, 255, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 0),          // ICMPv6
            ipv6Frame(44, 64, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 0),           // a fragment header
            ipv6Frame(0, 64, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 0),            // hop-by-hop options
            ipv6Frame(60, 64, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, port, 80, 0),           // destination options
            ipv6Frame(17, 64, DOC_HIGH, PEER6_LOW, 0xff02_0000_0000_0000L, 0xfbL, port, 80, 0), // multicast
            java.util.Arrays.copyOf(tcp, 14 + 40 + 2),                                        // ports cut off
            java.util.Arrays.copyOf(tcp, 14 + 30));                                           // header cut off
        for (byte[] frame : shardZero) {
            assertEquals(0, javaShard(frame, 2), "java");
            assertEquals(0, kernelShard(frame, 2), "program");
        }
    }

    @Test
    void theProgramAndJavaAgreeOnArbitraryIpv6Frames() {
        qt().withExamples(20_000).forAll(integers().all(), integers().between(1, 9), integers().between(0, 120))
            .checkAssert((seed, shards, length) -> {
                final SplittableRandom random = new SplittableRandom(seed);
                final byte[] frame = new byte[length];
                random.nextBytes(frame);
                if (length > 13 && random.nextInt(8) != 0) {
                    frame[12] = (byte) 0x86;
                    frame[13] = (byte) 0xDD;
                }
                if (length > 20 && random.nextInt(8) != 0) {
                    frame[20] = (byte) (random.nextBoolean() ? 6 : 17);
                }
                if (length > 38 && random.nextBoolean()) {
                    frame[38] = (byte) (random.nextInt(4) == 0 ? 0xFF : 0x20);
                }
                assertEquals(kernelShard(frame, shards), javaShard(frame, shards),
                    "seed " + seed + ", " + shards + " shards, " + length + " bytes");
                assertTrue(javaShard(frame, shards) < shards);
            });
    }

    /** An ICMPv6 message of {@code type} from the peer quoting a packet we sent with {@code quotedNextHeader}. */
    static byte[] icmpv6ErrorFrame(int type, int quotedNextHeader, int ourPort, int peerPort) {
        final ByteBuffer b = ByteBuffer.allocate(14 + 40 + 8 + 40 + 8);
        b.put(new byte[] {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}).putShort((short) 0x86DD);
        b.putInt(0x6000_0000).putShort((short) (8 + 48)).put((byte) 58).put((byte) 64)
            .putLong(DOC_HIGH).putLong(PEER6_LOW).putLong(DOC_HIGH).putLong(US6_LOW);
        b.put((byte) type).put((byte) 0).putShort((short) 0).putInt(type == 129 ? ourPort << 16 : 1280);
        b.putInt(0x6000_0000).putShort((short) 8).put((byte) quotedNextHeader).put((byte) 64)
            .putLong(DOC_HIGH).putLong(US6_LOW).putLong(DOC_HIGH).putLong(PEER6_LOW);
        b.putShort((short) ourPort).putShort((short) peerPort).putInt(0);
        return b.array();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void anIcmpv6ErrorBelongsToTheShardOfTheFlowItQuotesSeenFromThePeer(int type) {
        int moved = 0;
        for (int shards : new int[] {2, 3, 8}) {
            for (int protocol : new int[] {6, 17}) {
                for (int peerPort = 40000; peerPort < 40100; peerPort++) {
                    final byte[] frame = icmpv6ErrorFrame(type, protocol, 80, peerPort);
                    final MemorySegment segment = MemorySegment.ofArray(frame);
                    assertEquals(0, ShardSteering.shardOf(segment, 0, frame.length, shards), "ICMPv6 itself reaches 0");
                    final int expected = ShardSteering.shardOf6(ShardRule.FLOW_HASH, DOC_HIGH, PEER6_LOW, DOC_HIGH,
                        US6_LOW, peerPort, 80, shards);
                    assertEquals(expected, ShardSteering.icmpShardOf(segment, 0, frame.length, shards));
                    moved += expected != 0 ? 1 : 0;
                }
            }
        }
        assertTrue(moved > 100, "errors move to other shards: " + moved);
        final byte[] quotesIcmp = icmpv6ErrorFrame(type, 58, 80, 40001);
        assertEquals(0, ShardSteering.icmpShardOf(MemorySegment.ofArray(quotesIcmp), 0, quotesIcmp.length, 4));
        final byte[] cut = java.util.Arrays.copyOf(icmpv6ErrorFrame(type, 6, 80, 40001), 14 + 40 + 8 + 40 + 2);
        assertEquals(0, ShardSteering.icmpShardOf(MemorySegment.ofArray(cut), 0, cut.length, 4));
    }

    @Test
    void anIcmpv6EchoReplyGoesToTheShardItsIdentifierNames() {
        for (int shard = 0; shard < 4; shard++) {
            final int identifier = ShardSteering.echoIdentifier(1234, shard, 4);
            final byte[] reply = icmpv6ErrorFrame(129, 6, identifier, 0);
            assertEquals(shard, ShardSteering.icmpShardOf(MemorySegment.ofArray(reply), 0, reply.length, 4));
        }
    }

    @Test
    void neighbourDiscoveryFromANeighbourIsWhatShardZeroPassesOn() {
        for (int type = 130; type <= 140; type++) {
            final byte[] frame = ipv6Frame(58, 255, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, type << 8, 0, 20);
            final boolean passedOn = type == 134 || type == 135 || type == 136;
            assertEquals(passedOn, ShardSteering.isNeighbourDiscovery(MemorySegment.ofArray(frame), 0, frame.length),
                "type " + type);
        }
        final byte[] routed = ipv6Frame(58, 254, DOC_HIGH, PEER6_LOW, DOC_HIGH, US6_LOW, 136 << 8, 0, 20);
        assertTrue(!ShardSteering.isNeighbourDiscovery(MemorySegment.ofArray(routed), 0, routed.length),
            "a hop limit below 255 came through a router (RFC 4861 §7.1)");
        final byte[] ipv4 = ipv4Frame(1, PEER, US, 136 << 8, 0, 0, 0, 20);
        assertTrue(!ShardSteering.isNeighbourDiscovery(MemorySegment.ofArray(ipv4), 0, ipv4.length));
    }
}
