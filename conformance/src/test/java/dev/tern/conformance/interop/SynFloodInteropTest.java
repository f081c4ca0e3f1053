package dev.tern.conformance.interop;

import dev.tern.core.testing.ExternalTools;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.tcp.TcpOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An established transfer from the kernel to Tern while hping3 floods Tern's listening port with SYNs from the peer
 * (a SYN flood must not starve an established connection, shown against the kernel's hping3): every byte arrives, in order (SHA-256 equal on both ends), within a bounded time, and
 * the flood really reached Tern (its SYNs were answered with cookies or SYN-ACKs, or shed). How much of its rate the
 * transfer keeps is the veth benchmark's business ({@code bench-veth.sh --only flood}), not this test's.
 *
 * <p>Offloads on, Tern's link with the vnet header, Tern on the test's thread. 64 MiB, a 60 s deadline; the flood
 * is ended by PID when the transfer is over.
 */
class SynFloodInteropTest extends VethRigTest {
    private static final long SECOND_NS = 1_000_000_000L;
    private static final long BYTES = 64L << 20;
    private static final int PORT = 5001;

    /** SYNs the stack answered (a cookie or a SYN-ACK) or dropped under pressure. */
    private long synsSeen() {
        return rig.counter("tcp.syncookies.sent") + rig.counter("tcp.conn.passive_opens")
            + rig.counter("tcp.drop.syn_pressure");
    }

    @Test
    void anEstablishedTransferArrivesWholeUnderASynFloodAtTheListeningPort() throws Exception {
        final String hping3 = ExternalTools.require("hping3", "hping3").toString();
        rig = VethRig.create(new VethSetup(1500, true));
        final NetStack stack = rig.startTernHere(builder -> { });
        final TcpListener listener = stack.listen(PORT, 4, TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20));
        final long deadline = System.nanoTime() + 60 * SECOND_NS;
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Long.toString(BYTES), "60");
        final TcpConnection connection = listener.accept(20 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());

        final BackgroundCommand flood = rig.net().startInPeer(hping3, "-q", "-S", "-p", Integer.toString(PORT), "--flood",
            NetnsHarness.TERN_ADDRESS);
        final TcpStreams.Result received;
        try {
            // The flood is on before most of the data moves: the connection waits with its window full meanwhile.
            rig.pollUntil(() -> synsSeen() > 1_000, Duration.ofSeconds(20));
            received = TcpStreams.receive(connection, BYTES, deadline);
        } finally {
            flood.stop();
        }
        connection.shutdownOutput();
        rig.pollUntil(() -> !source.isAlive(), Duration.ofSeconds(20));
        connection.close();
        listener.close();

        final long synsSeen = synsSeen();
        System.out.printf("kernel -> Tern %d bytes in %.2f s under a SYN flood: %d SYNs seen by the stack, %d shed"
                + " episodes, %d polls under pressure, link kernel drops %d%n", received.bytes(), received.nanos() / 1e9,
            synsSeen, rig.counter("stack.shed.episodes"), rig.counter("stack.shed.pressure_polls"),
            rig.counter("link.rx.kernel_drops"));
        assertEquals("sent " + BYTES + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"),
            "Tern received every byte the kernel sent, in order: " + source.stdout() + source.stderr());
        assertTrue(synsSeen > 1_000, "the flood reached Tern: " + synsSeen + " SYNs");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }
}
