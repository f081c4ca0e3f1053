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
}
