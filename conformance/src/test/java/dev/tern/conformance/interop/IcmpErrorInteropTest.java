package dev.tern.conformance.interop;

import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ICMP errors Tern sends, as the Linux kernel receives them. For now the one the layers that exist can produce:
 * a datagram of a protocol nobody registered gets protocol unreachable (RFC 1122 §3.2.2.1), quoting the offending
 * datagram up to 576 bytes in all (RFC 1812 §4.3.2.3). Port unreachable comes with UDP.
 */
class IcmpErrorInteropTest extends VethRigTest {
    /** RFC 3692: 253 and 254 are for experiments, so no stack handles them. */
    static final int UNUSED_PROTOCOL = 253;
    private static final int MAX_QUOTE = 576 - 20 - 8;

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOn();
    }

    /** The two datagrams the kernel sends: a short one, quoted whole, and a 1000-byte one, quoted in part. */
    static byte[][] unusedProtocolDatagrams() {
        final byte[] text = "tern conformance: protocol 253 is unused".getBytes(StandardCharsets.US_ASCII);
        return new byte[][] {
            Frames.ipv4(PEER_IPV4, TERN_IPV4, UNUSED_PROTOCOL, 0x5445, 0, 64, text),
            Frames.ipv4(PEER_IPV4, TERN_IPV4, UNUSED_PROTOCOL, 0x5446, 0, 64, Frames.pattern(1000 - 20, 3)),
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelsDatagramOfAnUnusedProtocolGetsProtocolUnreachable(VethSetup setup, @TempDir Path directory) {
        rig = VethRig.start(setup);
        final Path pcap = directory.resolve("protocol-unreachable.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 32);
        final Map<String, Long> before = rig.kernel().snmp();

        final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(3, 2, unusedProtocolDatagrams());
        KernelPeer.stopCapture(tcpdump, pcap, 2 * 2 + 2);

        assertEquals(2, errors.size(), "one ICMP error per datagram");
        final Capture capture = Capture.read(pcap);
        final List<CapturedFrame> sent = capture.frames().stream().filter(f -> f.ipProtocol() == UNUSED_PROTOCOL).toList();
        final List<CapturedFrame> answers = capture.sentBy(rig.ternMac()).stream().filter(f -> f.icmpType() == 3).toList();
        assertEquals(2, sent.size(), "tcpdump saw both datagrams leave: " + capture.frames() + " " + tcpdump.stderr());
        assertEquals(2, answers.size(), "tcpdump saw both errors arrive");
        for (int i = 0; i < 2; i++) {
            final byte[] datagram = Arrays.copyOfRange(sent.get(i).bytes(), 14, sent.get(i).length());
            assertProtocolUnreachableQuoting(errors.get(i), datagram);
            assertArrayEquals(errors.get(i), Arrays.copyOfRange(answers.get(i).bytes(), 14, 14 + errors.get(i).length),
                "the kernel's socket got what was on the wire");
        }
        assertEquals(2, rig.counter("ipv4.drop.unknown_protocol"));
        assertEquals(2, rig.counter("icmp.tx.errors"));
        final Map<String, Long> after = rig.kernel().snmp();
        assertEquals(2, KernelPeer.delta(before, after, "Icmp.InDestUnreachs"));
        assertEquals(0, KernelPeer.delta(before, after, "Icmp.InErrors"));
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * RFC 1122 §3.2.2: no ICMP error about a datagram sent as a link-layer broadcast. The kernel is made to send a
     * datagram for 198.18.0.2 to ff:ff:ff:ff:ff:ff (a permanent neighbour entry); Tern used to answer it with
     * protocol unreachable. Unit reproducer: {@code FindingsTest.noIcmpErrorAboutADatagramReceivedAsALinkLayerBroadcast}.
     */
    @Test
    void noProtocolUnreachableForADatagramSentToTheEthernetBroadcastAddress() {
        rig = VethRig.start(VethSetup.DEFAULT);
        rig.kernel().setNeighbour(NetnsHarness.TERN_ADDRESS, MacAddress.BROADCAST, "permanent");

        final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(1, 1, unusedProtocolDatagrams()[0]);

        assertEquals(1, rig.counter("ipv4.drop.unicast_in_link_broadcast"), "Tern received it and discarded it (RFC 1122 §3.3.6)");
        assertEquals(List.of(), errors.stream().map(java.util.HexFormat.of()::formatHex).toList(), "and did not answer");
    }

    /** Checks one ICMP error datagram (IPv4 header first) from Tern about {@code original}. */
    static void assertProtocolUnreachableQuoting(byte[] error, byte[] original) {
        final MemorySegment bytes = MemorySegment.ofArray(error);
        assertEquals(0x45, error[0] & 0xFF, "IPv4, no options");
        assertEquals(TERN_IPV4, BigEndian.i32(bytes, 12), "from Tern");
        assertEquals(PEER_IPV4, BigEndian.i32(bytes, 16), "to the sender");
        assertEquals(1, error[9], "ICMP");
        assertEquals(error.length, BigEndian.u16(bytes, 2), "total length");
        assertTrue(InternetChecksum.verifies(InternetChecksum.add(0, bytes, 0, 20)), "IPv4 header checksum");
        assertEquals(3, error[20], "destination unreachable");
        assertEquals(2, error[21], "protocol unreachable");
        assertEquals(0, BigEndian.i32(bytes, 24), "unused word is zero");
        assertTrue(InternetChecksum.verifies(InternetChecksum.add(0, bytes, 20, error.length - 20)), "ICMP checksum");
        final int quoted = Math.min(original.length, MAX_QUOTE);
        assertEquals(28 + quoted, error.length, "quotes " + quoted + " bytes, 576 in all at most");
        assertArrayEquals(Arrays.copyOf(original, quoted), Arrays.copyOfRange(error, 28, error.length), "the datagram as it arrived");
    }
}
