package dev.tern.conformance.interop;

import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.stack.testing.Frames;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UDP between Tern and the Linux kernel (RFC 768, RFC 1122 §4.1): echo both ways with datagrams from empty to the
 * largest IPv4 allows (65507 bytes, 45 fragments at MTU 1500, reassembled by each stack), and ICMP port unreachable
 * for a closed port both ways, which a connected socket reports as "connection refused" (RFC 1122 §4.1.3.3) on
 * Linux (ECONNREFUSED) and on Tern ({@code ConnectionRefusedException}). Tern's side is an in-process stack owned by
 * the test thread; the kernel's side is {@code peer.py}.
 */
class UdpInteropTest extends VethRigTest {
    /** Empty, tiny, the largest unfragmented at MTU 1500, one more, a few fragments, the largest possible. */
    static final int[] SIZES = {0, 1, 1472, 1473, 8000, 65507};
    private static final int ECHO_PORT = 7;
    private static final int CLOSED_PORT = 9;
    private static final long SECOND_NS = 1_000_000_000L;

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOn();
    }

    /** Datagrams made larger than one frame: fragments per datagram at this MTU (1 when it fits). */
    private static int fragmentedDatagrams(VethSetup setup) {
        return (int) IntStream.of(SIZES).filter(size -> setup.fragmentsFor(size + 8) > 1).count();
    }

    private static int fragments(VethSetup setup) {
        return IntStream.of(SIZES).map(size -> setup.fragmentsFor(size + 8)).filter(n -> n > 1).sum();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternsDatagramsComeBackFromTheKernelsEchoServerIntact(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final BackgroundCommand echo = rig.kernel().startPeerPy("udp-echo", Integer.toString(ECHO_PORT), "30");
        final NetStack stack = rig.startTernHere(builder -> { });
        final Map<String, Long> before = rig.kernel().snmp();

        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            socket.connect(PEER_IPV4, ECHO_PORT);
            final MemorySegment buffer = arena.allocate(65536);
            for (int i = 0; i < SIZES.length; i++) {
                final byte[] payload = Frames.pattern(SIZES[i], i);
                assertTrue(socket.send(MemorySegment.ofArray(payload), 0, payload.length));
                final int length = socket.receive(buffer, 0, 65536, 3 * SECOND_NS);
                assertEquals(SIZES[i], length, "the echo of the " + SIZES[i] + "-byte datagram came back whole");
                assertArrayEquals(payload, buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(PEER_IPV4, socket.lastSourceAddress());
                assertEquals(ECHO_PORT, socket.lastSourcePort());
            }
        }
        echo.stop();

        assertTrue(KernelPeer.line(echo.stdout(), "echoed").equals("echoed " + SIZES.length), echo.stdout() + echo.stderr());
        final Map<String, Long> after = rig.kernel().snmp();
        assertEquals(SIZES.length, KernelPeer.delta(before, after, "Udp.InDatagrams"));
        assertEquals(0, KernelPeer.delta(before, after, "Udp.InErrors"));
        assertEquals(0, KernelPeer.delta(before, after, "Udp.InCsumErrors"), "Tern's UDP checksums are right");
        assertEquals(fragmentedDatagrams(setup), KernelPeer.delta(before, after, "Ip.ReasmOKs"), "the kernel reassembled Tern's datagrams");
        assertEquals(fragments(setup), KernelPeer.delta(before, after, "Ip.ReasmReqds"));
        assertEquals(SIZES.length, rig.counter("udp.rx.datagrams"));
        assertEquals(SIZES.length, rig.counter("udp.tx.datagrams"));
        assertEquals(fragmentedDatagrams(setup), rig.counter("ipv4.reasm.ok"), "Tern reassembled the kernel's echoes");
        assertEquals(fragmentedDatagrams(setup), rig.counter("ipv4.tx.fragmented_datagrams"));
        assertNoDropsOrErrors();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelsDatagramsComeBackFromTernsEchoSocketIntact(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = rig.startTernHere(builder -> { });
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            socket.bind(ECHO_PORT);
            final MemorySegment buffer = arena.allocate(65536);
            final List<String> arguments = new ArrayList<>(List.of("udp-client", NetnsHarness.TERN_ADDRESS,
                Integer.toString(ECHO_PORT), "3"));
            IntStream.of(SIZES).forEach(size -> arguments.add(Integer.toString(size)));
            final Map<String, Long> before = rig.kernel().snmp();
            final BackgroundCommand client = rig.kernel().launchPeerPy(arguments.toArray(String[]::new));

            assertTrue(rig.pollUntil(() -> {
                echoWaiting(socket, buffer);
                return !client.isAlive();
            }, Duration.ofSeconds(30)), "the kernel's client finished");

            final List<String> expected = IntStream.of(SIZES).mapToObj(size -> size + " ok").toList();
            assertEquals(expected, client.stdout().lines().toList(), client.stderr());
            final Map<String, Long> after = rig.kernel().snmp();
            assertEquals(0, KernelPeer.delta(before, after, "Udp.InCsumErrors"));
            assertEquals(fragmentedDatagrams(setup), KernelPeer.delta(before, after, "Ip.ReasmOKs"));
            assertEquals(fragmentedDatagrams(setup), rig.counter("ipv4.reasm.ok"));
            assertEquals(SIZES.length, rig.counter("udp.rx.datagrams"));
        }
        assertNoDropsOrErrors();
    }

    /** Sends every datagram waiting on {@code socket} back to where it came from. */
    private static void echoWaiting(UdpSocket socket, MemorySegment buffer) {
        try {
            int length;
            while ((length = socket.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                assertTrue(socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer, 0, length));
            }
        } catch (TernSocketException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelsConnectedSocketIsRefusedByAClosedTernPort(VethSetup setup) {
        rig = VethRig.create(setup);
        rig.startTern();
        final Map<String, Long> before = rig.kernel().snmp();

        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(20), "udp-client", NetnsHarness.TERN_ADDRESS,
            Integer.toString(CLOSED_PORT), "2", "100");

        assertEquals(List.of("100 refused"), client.stdout().lines().toList(), "ECONNREFUSED: " + client.stderr());
        assertEquals(1, rig.counter("udp.drop.no_socket"));
        assertEquals(1, rig.counter("icmp.tx.errors"), "one port unreachable");
        final Map<String, Long> after = rig.kernel().snmp();
        assertEquals(1, KernelPeer.delta(before, after, "Icmp.InDestUnreachs"));
        assertEquals(0, KernelPeer.delta(before, after, "Icmp.InErrors"), "a well-formed ICMP error");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternsConnectedSocketThrowsConnectionRefusedAfterTheKernelsPortUnreachable(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = rig.startTernHere(builder -> { });
        final Map<String, Long> before = rig.kernel().snmp();
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            socket.connect(PEER_IPV4, CLOSED_PORT);
            final byte[] payload = Frames.pattern(100, 1);
            assertTrue(socket.send(MemorySegment.ofArray(payload), 0, payload.length));
            final MemorySegment buffer = arena.allocate(2048);

            assertThrows(TernSocketException.ConnectionRefusedException.class, () -> socket.receive(buffer, 0, 2048, 3 * SECOND_NS));
            assertEquals(-1, socket.receive(buffer, 0, 2048), "the error is reported once, as on Linux");
        }
        final Map<String, Long> after = rig.kernel().snmp();
        assertEquals(1, KernelPeer.delta(before, after, "Udp.NoPorts"));
        assertEquals(1, KernelPeer.delta(before, after, "Icmp.OutDestUnreachs"));
        assertEquals(1, rig.counter("udp.rx.icmp_errors"));
    }

    /** No IPv4, ICMP or UDP drop counter of Tern moved, and no layer threw. */
    private void assertNoDropsOrErrors() {
        final Map<String, Long> drops = rig.countersContaining(".drop.");
        assertEquals(Map.of(), drops, "Tern dropped nothing");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }
}
