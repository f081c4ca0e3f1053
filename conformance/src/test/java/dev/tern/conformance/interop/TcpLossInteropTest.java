package dev.tern.conformance.interop;

import dev.tern.core.testing.ExternalTools;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.tcp.TcpOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.PacketLoss;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TCP between Tern and the Linux kernel over veth with random loss injected by the kernel (recovery shown against a real peer, not only on the memory wire): nftables
 * rules on a wire between the ends (a bridge in a namespace of its own) drop 1 % or 5 % of the packets each way
 * ({@link PacketLoss}; neither sender learns of a drop but from its peer), and a bounded
 * transfer must still arrive whole and in order (SHA-256 equal on both ends). That the loss was real is asserted too:
 * the rules dropped packets of the data's direction, and the sender retransmitted (Tern's {@code tcp.tx.retransmits},
 * the kernel's {@code Tcp.RetransSegs}).
 *
 * <p>The setting is the veth benchmark's lossy one: offloads off on both ends, Tern's link with the vnet header
 * (the kernel cuts Tern's 64 KiB segments before they cross, so the rule sees packets as they go on the wire), the
 * kernel on CUBIC (the route's congctl), Tern on the test's thread.
 *
 * <p>Sizes: 16 MiB each way at 1 % (about 11,600 packets, some 116 drops each way, so every recovery mechanism
 * runs many times) and 4 MiB at 5 % (about 2,900 packets, some 145 drops). At 5 % both the kernel's CUBIC and Tern's
 * move a few MB/s on this path (a window rarely grows past a few segments), so 4 MiB takes seconds. Every transfer is
 * bounded by a 60 s deadline besides. Measured on the 2-core build machine: 20-30 s for the class, rigs included.
 */
class TcpLossInteropTest extends VethRigTest {
    private static final VethSetup SETUP = new VethSetup(1500, false, true);
    private static final TcpOptions LARGE_BUFFERS = TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);
    private static final long SECOND_NS = 1_000_000_000L;
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final int PORT = 5001;

    /** The rig in the lossy setting, with {@code percent} loss each way on the wire. */
    private PacketLoss lossyRig(double percent) {
        ExternalTools.require("nft", "nftables");
        rig = VethRig.create(SETUP, true);
        rig.net().kernelCongestionControl("cubic");
        return PacketLoss.install(rig.net(), percent);
    }

    private static long ternBytes(double percent) {
        return percent < 2 ? 16 << 20 : 4 << 20;
    }

    private static long kernelBytes(double percent) {
        return percent < 2 ? 16 << 20 : 4 << 20;
    }

    @ParameterizedTest(name = "{0} % loss")
    @ValueSource(doubles = {1, 5})
    void ternSendsToTheKernelIntactThroughRandomLoss(double percent) throws Exception {
        try (PacketLoss loss = lossyRig(percent)) {
            final long bytes = ternBytes(percent);
            final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", Integer.toString(PORT), "60", "0");
            final NetStack stack = rig.startTernHere(builder -> { });
            final long deadline = System.nanoTime() + DEADLINE.toNanos();

            final TcpConnection connection = stack.connect(PEER_IPV4, PORT, 0, LARGE_BUFFERS);
            connection.awaitConnected(20 * SECOND_NS); // a lost SYN or SYN-ACK costs Tern a 1 s timeout each
            final TcpStreams.Result sent = TcpStreams.send(connection, bytes, deadline);
            connection.shutdownOutput();
            final TcpStreams.Result back = TcpStreams.receive(connection, 0, deadline);
            connection.close();
            rig.pollUntil(() -> !sink.isAlive(), Duration.ofSeconds(20));

            final PacketLoss.Counts counts = loss.counts();
            System.out.printf("%.0f %% loss: Tern -> kernel %d bytes in %.2f s, %d retransmits; the rules dropped %s%n",
                percent, sent.bytes(), sent.nanos() / 1e9, rig.counter("tcp.tx.retransmits"), counts);
            assertEquals(0, back.bytes());
            assertEquals("received " + bytes + " " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"),
                "the kernel received every byte, in order: " + sink.stdout() + sink.stderr());
            assertTrue(counts.toPeerDropped() > 0, "the wire dropped some of Tern's packets: " + counts);
            assertTrue(rig.counter("tcp.tx.retransmits") > 0, "and Tern sent them again");
            assertEquals(0, rig.counter("stack.internal_errors"));
        }
    }

    @ParameterizedTest(name = "{0} % loss")
    @ValueSource(doubles = {1, 5})
    void kernelSendsToTernIntactThroughRandomLoss(double percent) throws Exception {
        try (PacketLoss loss = lossyRig(percent)) {
            final long bytes = kernelBytes(percent);
            final NetStack stack = rig.startTernHere(builder -> { });
            final TcpListener listener = stack.listen(PORT, 4, LARGE_BUFFERS);
            final Map<String, Long> before = rig.kernel().snmp();
            final long deadline = System.nanoTime() + DEADLINE.toNanos();
            final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
                Integer.toString(PORT), Long.toString(bytes), "60");

            final TcpConnection connection = listener.accept(20 * SECOND_NS);
            assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
            final TcpStreams.Result received = TcpStreams.receive(connection, bytes, deadline);
            connection.shutdownOutput();
            rig.pollUntil(() -> !source.isAlive(), Duration.ofSeconds(20));
            connection.close();
            listener.close();

            final PacketLoss.Counts counts = loss.counts();
            final long retransmitted = KernelPeer.delta(before, rig.kernel().snmp(), "Tcp.RetransSegs");
            System.out.printf("%.0f %% loss: kernel -> Tern %d bytes in %.2f s, the kernel retransmitted %d; the rules dropped %s%n",
                percent, received.bytes(), received.nanos() / 1e9, retransmitted, counts);
            assertEquals("sent " + bytes + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"),
                "Tern received every byte the kernel sent, in order: " + source.stdout() + source.stderr());
            assertTrue(counts.fromPeerDropped() > 0, "the wire dropped some of the kernel's packets: " + counts);
            assertTrue(retransmitted > 0, "and the kernel sent them again");
            assertEquals(0, rig.counter("stack.internal_errors"));
        }
    }
}
