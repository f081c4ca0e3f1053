package dev.tern.conformance.interop;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.NetnsHarness;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.tcp.TcpOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static dev.tern.afpacket.netns.NetnsHarness.PEER_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * TCP between Tern and the Linux kernel over veth, both ways.
 */
class TcpInteropTest {
    private static final long BULK = 256L << 20;
    private static final Duration BULK_TIME = Duration.ofSeconds(60);
    private static final TcpOptions LARGE_BUFFERS = TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);
    private static final int PORT = 5001;

    private VethRig rig;

    @AfterEach
    void closeRig() {
        if (rig != null) {
            rig.close();
        }
    }

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOn();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternSends256MiBToTheKernelIntact(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", Integer.toString(PORT), "60", "0");
        final NetStack stack = rig.startTernHere(builder -> { });
        final long deadline = System.nanoTime() + BULK_TIME.toNanos();

        final TcpConnection connection = stack.connect(PEER_IPV4, PORT, 0, LARGE_BUFFERS);
        connection.awaitConnected(5_000_000_000L);
        final TcpStreams.Result sent = TcpStreams.send(connection, BULK, deadline);
        connection.shutdownOutput();
        final TcpStreams.Result back = TcpStreams.receive(connection, 0, deadline);
        connection.close();
        rig.pollUntil(() -> !sink.isAlive(), Duration.ofSeconds(10));

        System.out.printf("%s: Tern -> kernel %d bytes in %.2f s, %.2f Gbit/s%n", setup, sent.bytes(), sent.nanos() / 1e9,
            sent.gbitPerSecond());
        assertEquals(0, back.bytes());
        assertEquals("received " + BULK + " " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"), sink.stdout() + sink.stderr());
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelSends256MiBToTernIntact(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final NetStack stack = rig.startTernHere(builder -> { });
        final TcpListener listener = stack.listen(PORT, 4, LARGE_BUFFERS);
        final long deadline = System.nanoTime() + BULK_TIME.toNanos();
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Long.toString(BULK), "60");

        final TcpConnection connection = listener.accept(10_000_000_000L);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        final TcpStreams.Result received = TcpStreams.receive(connection, BULK, deadline);
        connection.shutdownOutput();
        rig.pollUntil(() -> !source.isAlive(), Duration.ofSeconds(10));
        connection.close();

        System.out.printf("%s: kernel -> Tern %d bytes in %.2f s, %.2f Gbit/s%n", setup, received.bytes(),
            received.nanos() / 1e9, received.gbitPerSecond());
        assertEquals("sent " + BULK + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"), source.stdout() + source.stderr());
        assertEquals(0, rig.counter("stack.internal_errors"));
    }
}
