package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.stack.sim.Simulation;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stack that goes away tells its peers: a stop resets every connection a peer knows of (none is left half-open
 * writing to a host that is gone), and a graceful stop sends the data written so far, then a FIN, first.
 */
class StackStopTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int SERVER = Ipv4Address.parse("198.18.0.1");

    /** The TCP flags of every frame the stack sends (offset 14 + 20 + 13: no IP options here). */
    private static final class FlagRecorder extends ForwardingLink {
        final List<Integer> tcpFlags = new ArrayList<>();

        FlagRecorder(Link link) {
            super(link);
        }

        @Override
        public void commit(TxFrame frame) {
            if (frame.length() >= 54 && frame.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, frame.offset() + 23) == 6) {
                tcpFlags.add(frame.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, frame.offset() + 47) & 0xFF);
            }
            super.commit(frame);
        }

        long resets() {
            return tcpFlags.stream().filter(f -> (f & TcpFlags.RST) != 0).count();
        }
    }

    private FlagRecorder recorder;

    private NetStack server(Simulation sim) {
        return sim.addStack("server", "198.18.0.1/24", link -> recorder = new FlagRecorder(link), b -> { });
    }

    @Test
    void resettingTellsEveryPeerHeldOrReleasedAndTheListenerStops() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack server = server(sim);
            final NetStack client = sim.addStack("client", "198.18.0.2/24");
            final TcpListener listener = server.listen(80, 16);
            final TcpConnection held = client.connect(SERVER, 80);
            final TcpConnection released = client.connect(SERVER, 80);
            assertTrue(sim.runUntil(() -> held.isConnected() && released.isConnected(), 5 * SECOND));
            final TcpConnection first = listener.accept();
            final TcpConnection second = listener.accept();
            // One the server's application still holds, one it closed while the client keeps its side open
            // (FIN-WAIT-2, no handle left): both are known to their peers.
            second.close();
            sim.runFor(SECOND);
            final long resetsBefore = recorder.resets();

            assertEquals(2, server.resetConnections());
            sim.runFor(SECOND);
            assertEquals(resetsBefore + 2, recorder.resets(), "one reset each");
            assertEquals(SocketError.CONNECTION_RESET, held.error());
            assertEquals(SocketError.CONNECTION_RESET, released.error());
            assertEquals(2, server.counters().value("stack.stop.connections_reset"));
            assertEquals(1, server.counters().value("stack.stop.listeners_closed"));

            // The listener is gone: a new SYN is refused.
            final TcpConnection late = client.connect(SERVER, 80);
            sim.runFor(SECOND);
            assertEquals(SocketError.CONNECTION_REFUSED, late.error());
            assertEquals(0, server.resetConnections(), "nothing left to reset");
            first.close();
        }
    }

    @Test
    void closingTheStackResetsBeforeTheLinkCloses() throws Exception {
        final Simulation sim = new Simulation();
        try {
            final NetStack server = server(sim);
            final NetStack client = sim.addStack("client", "198.18.0.2/24");
            final TcpListener listener = server.listen(80, 16);
            final TcpConnection connection = client.connect(SERVER, 80);
            assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
            listener.accept();
            final long resetsBefore = recorder.resets();
            server.close();
            assertEquals(resetsBefore + 1, recorder.resets(), "the reset was committed to the link before it closed");
        } finally {
            sim.close();
        }
    }

    @Test
    void aGracefulStopSendsTheDataWrittenThenAFinAndResetsOnlyWhatIsLeftAfterIt() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack server = server(sim);
            final NetStack client = sim.addStack("client", "198.18.0.2/24");
            final TcpListener listener = server.listen(80, 16);
            final TcpConnection polite = client.connect(SERVER, 80);
            final TcpConnection stubborn = client.connect(SERVER, 80);
            assertTrue(sim.runUntil(() -> polite.isConnected() && stubborn.isConnected(), 5 * SECOND));
            final TcpConnection toPolite = listener.accept();
            final TcpConnection toStubborn = listener.accept();
            final MemorySegment data = arena.allocate(100_000);
            assertEquals(100_000, toPolite.write(data, 0, 100_000));

            assertEquals(2, server.shutdown(), "both given a FIN after their data");
            final MemorySegment in = arena.allocate(200_000);
            final long[] received = {0};
            assertTrue(sim.runUntil(() -> {
                try {
                    int n;
                    while ((n = polite.read(in, 0, (int) in.byteSize())) > 0) {
                        received[0] += n;
                    }
                    if (polite.isEndOfStream()) {
                        polite.close();   // the polite client closes its side on the FIN
                    }
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
                return polite.isEndOfStream();
            }, 10 * SECOND));
            assertEquals(100_000, received[0], "everything written arrived before the FIN");
            sim.runFor(SECOND);
            assertFalse(server.connectionsEnded(), "the stubborn client has not closed its side");
            assertEquals(0, recorder.resets(), "no reset yet");

            // The linger ran out: what is left is reset.
            assertEquals(1, server.resetConnections());
            sim.runFor(SECOND);
            assertEquals(SocketError.CONNECTION_RESET, stubborn.error());
            assertEquals(SocketError.NONE, polite.error());
            assertEquals(2, server.counters().value("stack.stop.connections_finished"));
            assertEquals(1, server.counters().value("stack.stop.connections_reset"));
            toPolite.close();
            toStubborn.close();
        }
    }

    /**
     * A connection the server closed and let go still delivers its data and FIN: a graceful stop waits for it as for
     * those its sockets hold, and the reset at the end finds nothing to reset.
     */
    @Test
    void aGracefulStopWaitsForConnectionsClosedAndLetGoToFinish() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack server = server(sim);
            final NetStack client = sim.addStack("client", "198.18.0.2/24");
            final TcpListener listener = server.listen(80, 16);
            final TcpConnection connection = client.connect(SERVER, 80);
            assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
            final TcpConnection accepted = listener.accept();
            final MemorySegment data = arena.allocate(100_000);
            assertEquals(100_000, accepted.write(data, 0, 100_000));
            accepted.close();   // let go with its data still to send

            server.shutdown();
            assertFalse(server.connectionsEnded(), "the connection let go is still sending");
            final MemorySegment in = arena.allocate(200_000);
            final long[] received = {0};
            final boolean[] clientClosed = {false};
            assertTrue(sim.runUntil(() -> {
                try {
                    int n;
                    while (!clientClosed[0] && (n = connection.read(in, 0, (int) in.byteSize())) > 0) {
                        received[0] += n;
                    }
                    if (!clientClosed[0] && connection.isEndOfStream()) {
                        connection.close();
                        clientClosed[0] = true;
                    }
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
                return server.connectionsEnded();
            }, 10 * SECOND), "the connection let go ended both ways");
            assertEquals(100_000, received[0]);
            assertEquals(0, server.resetConnections(), "nothing left to reset");
            assertEquals(0, recorder.resets());
        }
    }
}
