package dev.tern.conformance.interop;

import dev.tern.conformance.replay.Capture;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TCP between Tern and the Linux kernel over veth (RFC 9293): 256 MiB each way with SHA-256 equality, with offloads
 * off and on (on: the kernel's TSO/GSO hands Tern super-frames of up to 64 KiB, and Tern sends TSO frames through
 * the vnet header), with Tern's application on the stack's own thread or on another ({@code StackRunner}); half-close
 * each way; resets for a closed port (a SYN is refused both ways; data to a closed port gets the reset RFC 9293
 * §3.10.7.1 prescribes); a close with unread data resets the kernel's connection (RFC 2525 §2.17).
 *
 * <p>The kernel's side is {@code peer.py}; every transfer is bounded in bytes and by a deadline.
 */
class TcpInteropTest extends VethRigTest {
    private static final long BULK = 256L << 20;
    private static final Duration BULK_TIME = Duration.ofSeconds(60);
    private static final long SECOND_NS = 1_000_000_000L;
    private static final TcpOptions LARGE_BUFFERS = TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);
    private static final int PORT = 5001;
    private static final int CLOSED_PORT = 5999;

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOn();
    }

    /**
     * Offloads off and on, and off with the vnet header (the kernel segments Tern's super-frames in software), each
     * with the application on the stack's thread and on a thread of its own; then Tern on AF_XDP with offloads off and
     * with those that work on (all but the peer's transmit checksum, {@link VethSetup#AF_XDP_PEER_OFFLOADS}), at MTU
     * 1500 and 9000 (multi-buffer frames), on the stack's thread.
     */
    static Stream<Arguments> bulkRuns() {
        return Stream.concat(
            VethSetup.offloadsOffAndOnAndSoftwareSegmentation().flatMap(setup -> Stream.of(Arguments.of(setup, Threading.STACK_THREAD), Arguments.of(setup, Threading.RUNNER))),
            Stream.concat(VethSetup.afXdpOffloadsOffAndOn(), Stream.of(VethSetup.afXdp(9000, false), VethSetup.afXdp(9000, true)))
                .map(setup -> Arguments.of(setup, Threading.STACK_THREAD)));
    }

    /** Who polls Tern's stack: the test thread, which is also the application (as the tern command), or a StackRunner. */
    enum Threading {
        STACK_THREAD, RUNNER;

        NetStack start(VethRig rig) {
            return this == STACK_THREAD ? rig.startTernHere(builder -> { }) : rig.startTernRunner(builder -> { });
        }

        /** Waits for {@code done} (polling the stack when this thread owns it). */
        boolean await(VethRig rig, java.util.function.BooleanSupplier done, Duration timeout) throws InterruptedException {
            if (this == STACK_THREAD) {
                return rig.pollUntil(done, timeout);
            }
            final long deadline = System.nanoTime() + timeout.toNanos();
            while (!done.getAsBoolean()) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                Thread.sleep(5);
            }
            return true;
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("bulkRuns")
    void ternSends256MiBToTheKernelIntact(VethSetup setup, Threading threading) throws Exception {
        rig = VethRig.create(setup);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", Integer.toString(PORT), "60", "0");
        final NetStack stack = threading.start(rig);
        final long deadline = System.nanoTime() + BULK_TIME.toNanos();
        final long peerFramesBefore = rig.net().peerInterfaceCounter("rx_packets");

        final TcpConnection connection = stack.connect(PEER_IPV4, PORT, 0, LARGE_BUFFERS);
        connection.awaitConnected(5 * SECOND_NS);
        final TcpStreams.Result sent = TcpStreams.send(connection, BULK, deadline);
        connection.shutdownOutput();
        final TcpStreams.Result back = TcpStreams.receive(connection, 0, deadline);
        connection.close();
        threading.await(rig, () -> !sink.isAlive(), Duration.ofSeconds(10));

        System.out.printf("%s, %s: Tern -> kernel %d bytes in %.2f s, %.2f Gbit/s, %d retransmits%n", setup, threading,
            sent.bytes(), sent.nanos() / 1e9, sent.gbitPerSecond(), rig.counter("tcp.tx.retransmits"));
        assertEquals(0, back.bytes(), "the kernel sent nothing back");
        assertEquals("received " + BULK + " " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"),
            "the kernel received every byte, in order: " + sink.stdout() + sink.stderr());
        if (setup.vnetHeader()) {
            assertTrue(rig.counter("tcp.tx.tso_segments") > 0, "Tern sent TSO super-frames through the vnet header");
        }
        if (!setup.offloads()) {
            // Without offloads nothing larger than the MTU crosses the pair, super-frames included (cut in software).
            final long frames = rig.net().peerInterfaceCounter("rx_packets") - peerFramesBefore;
            assertTrue(frames >= BULK / (setup.mtu() - 40), "the kernel's end received MTU-sized frames: " + frames);
        }
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("bulkRuns")
    void kernelSends256MiBToTernIntact(VethSetup setup, Threading threading) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = threading.start(rig);
        final TcpListener listener = stack.listen(PORT, 4, LARGE_BUFFERS);
        final long deadline = System.nanoTime() + BULK_TIME.toNanos();
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Long.toString(BULK), "60");

        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        final TcpStreams.Result received = TcpStreams.receive(connection, BULK, deadline);
        connection.shutdownOutput();
        threading.await(rig, () -> !source.isAlive(), Duration.ofSeconds(10));
        connection.close();
        listener.close();

        System.out.printf("%s, %s: kernel -> Tern %d bytes in %.2f s, %.2f Gbit/s, %d segments%n", setup, threading,
            received.bytes(), received.nanos() / 1e9, received.gbitPerSecond(), rig.counter("tcp.rx.segments"));
        assertEquals("sent " + BULK + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"),
            "Tern received every byte the kernel sent, in order: " + source.stdout() + source.stderr());
        assertEquals("received 0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            KernelPeer.line(source.stdout(), "received"), "and then Tern's end of stream");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    static Stream<Arguments> zeroCopyRuns() {
        return VethSetup.offloadsOffAndOn().flatMap(setup -> Stream.of(Arguments.of(setup, Threading.STACK_THREAD),
            Arguments.of(setup, Threading.RUNNER)));
    }

    /**
     * Zero-copy receive against real frames: the kernel's 256 MiB reach a receive handler intact, in
     * order, in place in the AF_PACKET frames (64 KiB GRO frames with offloads on). The handler takes only half of
     * every fifth offer, so the ring fallback and {@code resumeReceive} run too.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("zeroCopyRuns")
    void kernelSends256MiBToTernsReceiveHandlerIntact(VethSetup setup, Threading threading) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = threading.start(rig);
        final TcpListener listener = stack.listen(PORT, 4, LARGE_BUFFERS);
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Long.toString(BULK), "60");

        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        final java.security.MessageDigest digest = TcpStreams.sha256();
        final long[] taken = {0, 0};
        final long started = System.nanoTime();
        connection.receiveHandler((c, data, offset, length) -> {
            final int n = ++taken[1] % 5 == 0 ? (length + 1) / 2 : length;
            digest.update(data.asSlice(offset, n).asByteBuffer());
            taken[0] += n;
            return n;
        });
        assertTrue(threading.await(rig, () -> {
            connection.resumeReceive();
            return connection.isEndOfStream() || connection.isEnded();
        }, BULK_TIME), "the end of the stream came: " + taken[0] + " bytes taken");
        final long nanos = System.nanoTime() - started;
        connection.shutdownOutput();
        threading.await(rig, () -> !source.isAlive(), Duration.ofSeconds(10));
        connection.close();
        listener.close();

        final long inPlace = rig.counter("tcp.rx.zero_copy_bytes");
        final long fromRing = rig.counter("tcp.rx.handler_ring_bytes");
        System.out.printf("%s, %s: kernel -> Tern's handler %d bytes in %.2f s, %.2f Gbit/s; %d in place, %d from the "
                + "ring, %d copied into it; %d segments out of order, %d frames the kernel dropped (ring full)%n", setup,
            threading, taken[0], nanos / 1e9, taken[0] * 8.0 / nanos, inPlace, fromRing, rig.counter("tcp.rx.copied_bytes"),
            rig.counter("tcp.rx.out_of_order"), rig.counter("link.rx.kernel_drops"));
        assertEquals("sent " + BULK + " " + java.util.HexFormat.of().formatHex(digest.digest()),
            KernelPeer.line(source.stdout(), "sent"),
            "the handler took every byte the kernel sent, in order: " + source.stdout() + source.stderr());
        assertEquals(BULK, inPlace + fromRing, "each byte reached the handler once, in place or from the ring");
        assertTrue(inPlace > 0, "bytes were taken in place");
        assertEquals(0, rig.counter("tcp.rx.handler_errors") + rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternHalfClosesAndKeepsReadingTheKernelsReply(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", Integer.toString(PORT), "20", "300000");
        final NetStack stack = rig.startTernHere(builder -> { });
        final long deadline = System.nanoTime() + 20 * SECOND_NS;

        final TcpConnection connection = stack.connect(PEER_IPV4, PORT);
        connection.awaitConnected(5 * SECOND_NS);
        final TcpStreams.Result sent = TcpStreams.send(connection, 100_000, deadline);
        connection.shutdownOutput();
        final TcpStreams.Result reply = TcpStreams.receive(connection, 300_000, deadline);
        rig.pollUntil(() -> !sink.isAlive(), Duration.ofSeconds(5));

        assertEquals("received 100000 " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"),
            "the kernel read Tern's data and its FIN: " + sink.stdout() + sink.stderr());
        assertEquals("sent 300000 " + reply.sha256(), KernelPeer.line(sink.stdout(), "sent"),
            "after its FIN, Tern read all the kernel sent, then the kernel's FIN");
        assertEquals("TIME-WAIT", connection.state(), "Tern closed first: it waits 2 MSL");
        connection.close();
        assertEquals(0, rig.counter("tcp.tx.resets"));
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelHalfClosesAndTernKeepsWriting(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = rig.startTernHere(builder -> { });
        final TcpListener listener = stack.listen(PORT, 4);
        final long deadline = System.nanoTime() + 20 * SECOND_NS;
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), "100000", "20");

        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        final TcpStreams.Result received = TcpStreams.receive(connection, 100_000, deadline);
        assertEquals("CLOSE-WAIT", connection.state(), "the kernel's FIN came; Tern's side is still open");
        final TcpStreams.Result sent = TcpStreams.sendPolling(connection, 300_000, deadline,
            () -> rig.pollFor(Duration.ofMillis(1)));
        connection.shutdownOutput();
        rig.pollUntil(() -> !source.isAlive() && connection.isEnded(), Duration.ofSeconds(5));

        assertEquals("sent 100000 " + received.sha256(), KernelPeer.line(source.stdout(), "sent"), source.stdout() + source.stderr());
        assertEquals("received 300000 " + sent.sha256(), KernelPeer.line(source.stdout(), "received"),
            "after its FIN the kernel read all Tern wrote, then Tern's FIN");
        assertTrue(connection.isEnded(), "LAST-ACK, then CLOSED: " + connection.state());
        assertEquals(0, connection.error());
        connection.close();
        listener.close();
        assertEquals(0, rig.counter("tcp.tx.resets"));
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * A blocking write to a connection whose peer has half-closed (CLOSE-WAIT), with the send ring full because the
     * peer reads nothing, gives up at its timeout and returns how much went in. It used to spin for ever: the wait
     * returned at once on HANGUP, which the peer's FIN alone set (HANGUP now means what POLLHUP means).
     */
    @Test
    void blockingWriteAfterThePeersFinReturnsAtItsTimeout() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final NetStack stack = rig.startTernRunner(builder -> { });
        final TcpListener listener = stack.listen(PORT, 4, TcpOptions.DEFAULT.withBuffers(4096, 4096));
        rig.kernel().launchPeerPy("tcp-half-close", NetnsHarness.TERN_ADDRESS, Integer.toString(PORT), "20");
        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection);
        assertEquals(10, TcpStreams.receive(connection, 10, System.nanoTime() + 5 * SECOND_NS).bytes(), "10 bytes, then the FIN");
        final byte[] megabyte = new byte[1 << 20];
        final CompletableFuture<Integer> written = CompletableFuture.supplyAsync(() -> {
            try {
                return connection.write(MemorySegment.ofArray(megabyte), 0, megabyte.length, SECOND_NS / 2);
            } catch (TernSocketException e) {
                return -1;
            }
        });
        try {
            final int went = written.get(5, TimeUnit.SECONDS);
            assertTrue(went > 0 && went < megabyte.length, "part of the megabyte went in before the timeout: " + went);
        } finally {
            connection.close();
        }
    }

    @Test
    void kernelsConnectToAClosedTernPortIsRefused() {
        rig = VethRig.start(VethSetup.DEFAULT);

        final CommandResult connect = rig.kernel().runPeerPy(Duration.ofSeconds(20), "tcp-connect", NetnsHarness.TERN_ADDRESS,
            Integer.toString(CLOSED_PORT), "5");

        assertEquals("error ECONNREFUSED", connect.stdout().strip(), connect.stderr());
        assertEquals(1, rig.counter("tcp.tx.resets"), "one RST|ACK for the SYN");
    }

    @Test
    void ternsConnectToAClosedKernelPortThrowsConnectionRefused() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final NetStack stack = rig.startTernHere(builder -> { });

        final TcpConnection connection = stack.connect(PEER_IPV4, CLOSED_PORT);
        assertThrows(TernSocketException.ConnectionRefusedException.class, () -> connection.awaitConnected(5 * SECOND_NS));

        assertTrue(connection.isEnded());
        assertEquals(1, rig.counter("tcp.conn.refused"));
        connection.close();
    }

    /**
     * RFC 9293 §3.10.7.1, a segment for a closed port: with ACK, the reset is {@code <SEQ=SEG.ACK><CTL=RST>}; without,
     * {@code <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>} (a SYN counts one). The kernel sends the segments from a raw
     * socket; tcpdump on its end sees Tern's answers.
     */
    @Test
    void segmentsToAClosedTernPortGetTheResetsRfc9293Prescribes(@TempDir Path directory) {
        rig = VethRig.start(VethSetup.DEFAULT);
        final Path pcap = directory.resolve("resets.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 50);
        final byte[] data = "data for nobody".getBytes(StandardCharsets.US_ASCII);

        rig.kernel().sendRawAndCollectIcmp(0.2, 0,
            TcpFrame.datagram(PEER_IPV4, TERN_IPV4, 40001, CLOSED_PORT, 1000, 5000, TcpFrame.ACK | TcpFrame.PSH, data),
            TcpFrame.datagram(PEER_IPV4, TERN_IPV4, 40002, CLOSED_PORT, 2000, 0, TcpFrame.PSH, data),
            TcpFrame.datagram(PEER_IPV4, TERN_IPV4, 40003, CLOSED_PORT, 3000, 0, TcpFrame.SYN, new byte[0]),
            TcpFrame.datagram(PEER_IPV4, TERN_IPV4, 40004, CLOSED_PORT, 4000, 6000, TcpFrame.ACK | TcpFrame.FIN, new byte[0]),
            TcpFrame.datagram(PEER_IPV4, TERN_IPV4, 40005, CLOSED_PORT, 5000, 7000, TcpFrame.RST | TcpFrame.ACK, new byte[0]));
        KernelPeer.stopCapture(tcpdump, pcap, 5 + 4 + 2);

        final List<TcpFrame> resets = Capture.read(pcap).sentBy(rig.ternMac()).stream().filter(TcpFrame::is).map(TcpFrame::parse).toList();
        assertEquals(4, resets.size(), "one reset for each segment but the reset: " + resets);
        resets.forEach(r -> assertTrue(r.checksumValid() && r.dataLength() == 0 && r.sourcePort() == CLOSED_PORT, r.toString()));
        assertReset(resets.get(0), 40001, 5000, 0, TcpFrame.RST);
        assertReset(resets.get(1), 40002, 0, 2000 + data.length, TcpFrame.RST | TcpFrame.ACK);
        assertReset(resets.get(2), 40003, 0, 3001, TcpFrame.RST | TcpFrame.ACK);
        assertReset(resets.get(3), 40004, 6000, 0, TcpFrame.RST);
        assertEquals(4, rig.counter("tcp.tx.resets"));
    }

    private static void assertReset(TcpFrame reset, int port, long seq, long ack, int flags) {
        assertEquals(port, reset.destinationPort(), reset.toString());
        assertEquals(seq, reset.seq(), reset.toString());
        assertEquals(flags, reset.flags(), reset.toString());
        if ((flags & TcpFrame.ACK) != 0) {
            assertEquals(ack, reset.ack(), reset.toString());
        }
    }

    /** RFC 2525 §2.17 (and Linux): closing with received data unread resets the connection instead of a FIN. */
    @Test
    void ternClosingWithUnreadDataResetsTheKernelsConnection() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final NetStack stack = rig.startTernHere(builder -> { });
        final TcpListener listener = stack.listen(PORT, 4);
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Integer.toString(1 << 20), "20");

        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        assertTrue(rig.pollUntil(() -> connection.available() > 0, Duration.ofSeconds(5)), "data arrived");
        connection.close();
        rig.pollUntil(() -> !source.isAlive(), Duration.ofSeconds(10));

        assertTrue(Set.of("error ECONNRESET", "error EPIPE").contains(source.stdout().strip()),
            "the kernel's connection was reset: " + source.stdout() + source.stderr());
        assertTrue(rig.counter("tcp.tx.resets") >= 1);
        listener.close();
    }
}
