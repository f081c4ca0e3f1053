package dev.tern.cli;

import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.sim.Simulation;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tern serve --http}'s keep-alive timeout on virtual time: an idle persistent connection is closed with a FIN
 * (never a reset) once the timeout has passed since its last byte, and counted; a request in between starts the wait
 * again; with a timeout of 0 every response closes its connection. A client that stops taking a response, or does not
 * close after the last one, is reset after the send timeout or the linger time, and a slow one that keeps taking is
 * not. The server's segments are recorded as it sends them, with the virtual time.
 */
class HttpKeepAliveTimeoutTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int SERVER = 0xc612_0001;
    private static final String REQUEST = "GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n";

    @TempDir
    Path files;
    private Simulation sim;
    private NetStack client;
    private NetStack server;
    private SegmentRecorder sent;
    private HttpFileService http;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment scratch = arena.allocate(64 * 1024);

    /** A TCP segment the server sent: its flags and the virtual time it left. */
    private record Segment(int flags, long atNs) {
    }

    /** Records the flags of every TCP segment the wrapped link (the server's) sends. */
    private final class SegmentRecorder extends ForwardingLink {
        final List<Segment> segments = new ArrayList<>();

        SegmentRecorder(Link link) {
            super(link);
        }

        private final EthernetHeader ethernet = new EthernetHeader();
        private final Ipv4Header ipv4 = new Ipv4Header();
        private final TcpHeader tcp = new TcpHeader();

        @Override
        public void commit(TxFrame frame) {
            ethernet.wrap(frame.segment(), frame.offset(), frame.length());
            if (ethernet.etherType() == EtherType.IPV4) {
                ipv4.wrap(frame.segment(), frame.offset() + EthernetHeader.LENGTH, frame.length() - EthernetHeader.LENGTH);
                if (ipv4.protocol() == IpProtocol.TCP) {
                    tcp.wrap(frame.segment(), ipv4.base() + ipv4.headerLength(), ipv4.totalLength() - ipv4.headerLength());
                    segments.add(new Segment(tcp.flags(), sim.nowNs()));
                }
            }
            super.commit(frame);
        }

        List<Segment> with(int flag) {
            return segments.stream().filter(segment -> (segment.flags() & flag) != 0).toList();
        }
    }

    private void start(int keepAliveSeconds) throws Exception {
        start(keepAliveSeconds, HttpFileService.HEADER_TIMEOUT_SECONDS);
    }

    /** With {@code requestSeconds} as {@code serve --request-timeout} gives it. */
    private void start(int keepAliveSeconds, int requestSeconds) throws Exception {
        Files.writeString(files.resolve("a.txt"), "alpha\n");
        sim = new Simulation();
        server = sim.addStack("server", "198.18.0.1/24", link -> sent = new SegmentRecorder(link), builder -> { });
        client = sim.addStack("client", "198.18.0.2/24");
        http = new HttpFileService(server, 80, files, keepAliveSeconds, requestSeconds, TcpOptions.DEFAULT,
            new ConnectionTraces(null, true));
        sim.onPoll(http::poll);
    }

    @AfterEach
    void stop() {
        if (http != null) {
            http.close();
        }
        if (sim != null) {
            sim.close();
        }
        arena.close();
    }

    /** Starts the server with a keep-alive timeout of {@code keepAliveSeconds} and connects a client to it. */
    private TcpConnection startAndConnect(int keepAliveSeconds) throws Exception {
        start(keepAliveSeconds);
        return connect();
    }

    private TcpConnection connect() throws Exception {
        final TcpConnection connection = client.connect(SERVER, 80);
        assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
        return connection;
    }

    private void send(TcpConnection connection, String text) throws Exception {
        final byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        MemorySegment.copy(bytes, 0, scratch, ValueLayout.JAVA_BYTE, 0, bytes.length);
        assertEquals(bytes.length, connection.write(scratch, 0, bytes.length));
    }

    /** What the server sends in {@code durationNs} of virtual time; "EOF" marks its FIN, where the reading stops. */
    private String receiveFor(TcpConnection connection, long durationNs) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final boolean[] ended = {false};
        sim.runUntil(() -> {
            try {
                int n;
                while ((n = connection.read(scratch, 0, (int) scratch.byteSize())) > 0) {
                    out.writeBytes(scratch.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
                }
                ended[0] = n < 0;
                return ended[0];
            } catch (dev.tern.stack.TernSocketException e) {
                throw new AssertionError(e);
            }
        }, durationNs);
        return out.toString(StandardCharsets.ISO_8859_1) + (ended[0] ? "EOF" : "");
    }

    /** The server closes the connection within {@code durationNs}, counted as an idle timeout; the client closes too. */
    private void assertClosedForIdlenessWithin(TcpConnection connection, long durationNs) {
        assertEquals("EOF", receiveFor(connection, durationNs));
        assertEquals(1, idleTimeouts());
        connection.close();
    }

    /** Sends a GET of a.txt and returns what comes back within a second. */
    private String fetch(TcpConnection connection) throws Exception {
        send(connection, REQUEST);
        return receiveFor(connection, SECOND);
    }

    private long idleTimeouts() {
        return server.counters().value("http.conn.idle_timeouts");
    }

    /**
     * Between requests a persistent connection gives its rings back after a second (the server's attached buffer
     * bytes fall to nothing), and the next request on it is answered as before, the rings attached again; each quiet
     * second after a response gives them back once more.
     */
    @Test
    void anIdlePersistentConnectionGivesItsBuffersBackAndTheNextRequestIsServed() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        assertTrue(fetch(connection).endsWith("alpha\n"));
        assertEquals("", receiveFor(connection, 3 * SECOND));
        // (The connection may have idled a second already before its first request: the handshake here takes one.)
        long released = server.counters().value("tcp.memory.rings_released_idle");
        assertTrue(released >= 1);
        assertEquals(0, server.counters().value("tcp.memory.attached_bytes"), "the idle connection holds no rings");
        for (int i = 0; i < 3; i++) {
            final String again = fetch(connection);
            assertTrue(again.startsWith("HTTP/1.1 200 OK\r\n") && again.endsWith("alpha\n"), again);
            assertTrue(server.counters().value("tcp.memory.attached_bytes") > 0, "the request brought the rings back");
            assertEquals("", receiveFor(connection, 3 * SECOND));
            assertEquals(++released, server.counters().value("tcp.memory.rings_released_idle"), "given back again");
            assertEquals(0, server.counters().value("tcp.memory.attached_bytes"));
        }
        assertEquals(0, idleTimeouts());
        connection.close();
    }

    @Test
    void anIdlePersistentConnectionIsClosedWithAFinAfterTheTimeoutAndCounted() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        final String response = fetch(connection);
        assertTrue(response.startsWith("HTTP/1.1 200 OK\r\n") && response.endsWith("alpha\n"), response);
        assertTrue(!response.contains("Connection: close"), response);
        final long answeredNs = sent.segments.getLast().atNs();

        // Kept for the whole timeout: nothing more from the server, the connection open.
        assertEquals("", receiveFor(connection, 74 * SECOND));
        assertEquals(0, idleTimeouts());
        assertEquals(List.of(), sent.with(TcpFlags.FIN));

        // Then closed: a FIN, within the once-a-second sweep after the deadline, and no reset.
        assertEquals("EOF", receiveFor(connection, 3 * SECOND));
        final List<Segment> fins = sent.with(TcpFlags.FIN);
        assertTrue(!fins.isEmpty(), "a FIN: " + sent.segments);
        final long idleNs = fins.getFirst().atNs() - answeredNs;
        assertTrue(idleNs >= 75 * SECOND && idleNs <= 76 * SECOND + SECOND / 10, "closed after " + idleNs + " ns idle");
        assertEquals(1, idleTimeouts());
        assertEquals(dev.tern.core.io.SocketError.NONE, connection.error());

        // The client closes too; the connection ends on both sides without a reset.
        connection.close();
        sim.runFor(5 * SECOND);
        assertEquals(List.of(), sent.with(TcpFlags.RST));
        assertEquals(0, server.counters().value("tcp.tx.resets"));
        assertEquals(1, idleTimeouts());
    }

    @Test
    void aRequestBeforeTheTimeoutStartsTheWaitAgain() throws Exception {
        final TcpConnection connection = startAndConnect(10);
        for (int round = 0; round < 5; round++) {
            assertTrue(fetch(connection).endsWith("alpha\n"), "round " + round);
            assertEquals("", receiveFor(connection, 8 * SECOND), "round " + round);
        }
        // 45 s after the connection opened, five requests 9 s apart: still open, never counted.
        assertEquals(0, idleTimeouts());
        assertEquals(List.of(), sent.with(TcpFlags.FIN));
        assertClosedForIdlenessWithin(connection, 3 * SECOND);
    }

    @Test
    void aClientThatSendsHalfARequestAndStallsIsLetGo() throws Exception {
        final TcpConnection connection = startAndConnect(10);
        send(connection, "GET /a.txt HTTP/1.1\r\n");
        assertEquals("", receiveFor(connection, 9 * SECOND));
        assertClosedForIdlenessWithin(connection, 2 * SECOND);
    }

    /** Sends {@code text} a byte at a time, {@code gapNs} apart, and returns what the server sent meanwhile. */
    private String trickle(TcpConnection connection, String text, long gapNs) throws Exception {
        final StringBuilder received = new StringBuilder();
        for (int i = 0; i < text.length() && !received.toString().endsWith("EOF"); i++) {
            send(connection, text.substring(i, i + 1));
            received.append(receiveFor(connection, gapNs));
        }
        return received.toString();
    }

    /**
     * Slow loris: a request head trickled a byte every 5 s, each well inside the keep-alive wait, is answered 408 and
     * closed when its first byte is 60 s old (nginx's client_header_timeout), counted; the keep-alive wait is not.
     */
    @Test
    void aTrickledRequestHeadGetsA408AndAFinSixtySecondsAfterItsFirstByte() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        final long firstByteNs = sim.nowNs();
        final String received = trickle(connection, REQUEST, 5 * SECOND);
        assertTrue(received.startsWith("HTTP/1.1 408 Request Timeout\r\n") && received.endsWith("EOF"), received);
        assertTrue(received.contains("Connection: close"), received);
        final long closedAfterNs = sent.with(TcpFlags.FIN).getFirst().atNs() - firstByteNs;
        assertTrue(closedAfterNs >= 60 * SECOND && closedAfterNs <= 61 * SECOND + SECOND / 10,
            "closed " + closedAfterNs + " ns after the first byte");
        assertEquals(1, server.counters().value("http.conn.header_timeouts"));
        assertEquals(0, server.counters().value("http.conn.body_timeouts"));
        assertEquals(0, idleTimeouts());
        connection.close();
    }

    /**
     * {@code --request-timeout 10}: the same trickle, a byte every 2 s, gets its 408 and FIN 10 s after its first
     * byte, and a head whole in 8 s on the next connection is still served.
     */
    @Test
    void aShorterRequestTimeoutBoundsTheTrickledHeadByItsOwnSeconds() throws Exception {
        start(75, 10);
        final TcpConnection connection = connect();
        final long firstByteNs = sim.nowNs();
        final String received = trickle(connection, REQUEST, 2 * SECOND);
        assertTrue(received.startsWith("HTTP/1.1 408 Request Timeout\r\n") && received.endsWith("EOF"), received);
        final long closedAfterNs = sent.with(TcpFlags.FIN).getFirst().atNs() - firstByteNs;
        assertTrue(closedAfterNs >= 10 * SECOND && closedAfterNs <= 11 * SECOND + SECOND / 10,
            "closed " + closedAfterNs + " ns after the first byte");
        assertEquals(1, server.counters().value("http.conn.header_timeouts"));
        connection.close();
        final TcpConnection second = connect();
        final String slow = "GET /a.txt HTTP/1.1\r\n\r\n";
        final String served = trickle(second, slow, 8 * SECOND / slow.length());
        assertTrue(served.startsWith("HTTP/1.1 200 OK\r\n") && served.endsWith("alpha\n"), served);
        assertEquals(1, server.counters().value("http.conn.header_timeouts"), "the whole head is not counted");
        second.close();
    }

    /** A body trickled likewise: the request is answered when its head is whole, then 408 when the body is late. */
    @Test
    void aTrickledRequestBodyGetsA408SixtySecondsAfterItsHead() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        send(connection, "GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n");
        final String received = receiveFor(connection, SECOND) + trickle(connection, "x".repeat(100), 5 * SECOND);
        assertTrue(received.startsWith("HTTP/1.1 200 OK\r\n"), received);
        assertTrue(received.contains("alpha\nHTTP/1.1 408 Request Timeout\r\n") && received.endsWith("EOF"), received);
        assertEquals(1, server.counters().value("http.conn.body_timeouts"));
        assertEquals(0, server.counters().value("http.conn.header_timeouts"));
        connection.close();
    }

    /** A slow but whole request, its head in 50 s, is served as any other; the next one has its own 60 s. */
    @Test
    void aSlowRequestThatArrivesWholeInTimeIsServedAndTheNextHasItsOwnDeadline() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        final String slow = "GET /a.txt HTTP/1.1\r\n\r\n";
        final long gapNs = 50 * SECOND / slow.length();
        final String first = trickle(connection, slow, gapNs);
        assertTrue(first.startsWith("HTTP/1.1 200 OK\r\n") && first.endsWith("alpha\n"), first);
        final String second = trickle(connection, slow, gapNs);
        assertTrue(second.startsWith("HTTP/1.1 200 OK\r\n") && second.endsWith("alpha\n"), second);
        assertEquals(0, server.counters().value("http.conn.header_timeouts"));
        assertEquals(List.of(), sent.with(TcpFlags.FIN));
        connection.close();
    }

    @Test
    void idleConnectionsCostAPollNothingAndAreVisitedOnceASecond() throws Exception {
        start(75);
        final int idle = 200;
        final List<TcpConnection> connections = new ArrayList<>();
        for (int i = 0; i < idle; i++) {
            connections.add(client.connect(SERVER, 80));
        }
        assertTrue(sim.runUntil(() -> connections.stream().allMatch(TcpConnection::isConnected), 5 * SECOND));
        for (TcpConnection connection : connections) {
            send(connection, REQUEST);
        }
        sim.runFor(SECOND);
        for (TcpConnection connection : connections) {
            assertTrue(receiveFor(connection, 0).endsWith("alpha\n"));
        }
        assertEquals(idle, http.connections());

        // All of them kept and idle: a thousand polls serve none of them.
        http.poll();
        final long before = http.served();
        for (int i = 0; i < 1000; i++) {
            http.poll();
        }
        assertEquals(before, http.served(), "connections served by 1,000 polls with all of them idle");

        // One request: its connection is served, not the others.
        final TcpConnection active = connections.get(idle / 2);
        send(active, REQUEST);
        final long beforeRequest = http.served();
        assertTrue(receiveFor(active, SECOND / 10).endsWith("alpha\n"));
        final long forRequest = http.served() - beforeRequest;
        assertTrue(forRequest >= 1 && forRequest <= 4, "served " + forRequest + " times for one request");

        // A second on, the sweep for the timeout visits each once.
        sim.clock().advance(TcpService.SWEEP_INTERVAL_NS);
        final long beforeSweep = http.served();
        http.poll();
        assertEquals(idle, http.served() - beforeSweep);
        assertEquals(0, idleTimeouts());
    }

    /** A file of {@code bytes} random bytes, b.bin, and its content. */
    private byte[] bigFile(int bytes) throws Exception {
        final byte[] content = new byte[bytes];
        new java.util.Random(7).nextBytes(content);
        Files.write(files.resolve("b.bin"), content);
        return content;
    }

    private long counter(String name) {
        return server.counters().value(name);
    }

    @Test
    void aResponseTheClientStopsTakingIsResetAfterTheSendTimeoutAndCounted() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        bigFile(4 << 20);    // far more than the server's send ring and the client's window together
        final long requestNs = sim.nowNs();
        send(connection, "GET /b.bin HTTP/1.1\r\nHost: x\r\n\r\n");
        // The client reads nothing: its window closes and the server's ring fills within the first seconds, then
        // nothing moves. The clock of the timeout starts at the last movement, so no reset comes before request + 60 s.
        sim.runFor(requestNs + HttpFileService.SEND_TIMEOUT_SECONDS * SECOND - sim.nowNs());
        assertEquals(List.of(), sent.with(TcpFlags.RST), "kept while the send timeout runs");
        assertEquals(0, counter("http.conn.send_timeouts"));
        assertTrue(sent.segments.size() > 20, "the response had begun: " + sent.segments.size() + " segments");

        // And one within the 5 s it took the stall to set in, plus the once-a-second sweep.
        sim.runFor(7 * SECOND);
        final List<Segment> resets = sent.with(TcpFlags.RST);
        assertEquals(1, resets.size(), "one reset: " + resets);
        assertEquals(1, counter("http.conn.send_timeouts"));
        assertEquals(0, idleTimeouts(), "a stalled response is not an idle connection");
        assertEquals(0, http.connections());
    }

    @Test
    void aSlowClientThatKeepsTakingTheResponseIsNeverTimedOut() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        final byte[] content = bigFile(2 << 20);
        send(connection, "GET /b.bin HTTP/1.1\r\nHost: x\r\n\r\n");
        // 64 KiB every 40 s: each read opens the window and the server goes on; about 21 minutes in all, every gap
        // shorter than the send timeout.
        final ByteArrayOutputStream received = new ByteArrayOutputStream();
        while (received.size() < content.length + 100) {
            sim.runFor(40 * SECOND);
            final int n = connection.read(scratch, 0, 64 * 1024);
            if (n <= 0) {
                break;
            }
            received.writeBytes(scratch.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
            final byte[] bytes = received.toByteArray();
            final int headEnd = indexOfHeadEnd(bytes);
            if (headEnd >= 0 && bytes.length - headEnd == content.length) {
                break;
            }
        }
        final byte[] bytes = received.toByteArray();
        final int headEnd = indexOfHeadEnd(bytes);
        assertTrue(headEnd > 0, "a response head");
        assertTrue(java.util.Arrays.equals(content, java.util.Arrays.copyOfRange(bytes, headEnd, bytes.length)),
            "the whole file, intact: " + (bytes.length - headEnd) + " of " + content.length + " bytes");
        assertEquals(List.of(), sent.with(TcpFlags.RST));
        assertEquals(0, counter("http.conn.send_timeouts"));
    }

    private static int indexOfHeadEnd(byte[] bytes) {
        for (int i = 0; i + 4 <= bytes.length; i++) {
            if (bytes[i] == '\r' && bytes[i + 1] == '\n' && bytes[i + 2] == '\r' && bytes[i + 3] == '\n') {
                return i + 4;
            }
        }
        return -1;
    }

    @Test
    void aClientThatNeverClosesAfterTheLastResponseIsResetAfterTheLingerTime() throws Exception {
        final TcpConnection connection = startAndConnect(75);
        send(connection, "GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        final String response = receiveFor(connection, SECOND);
        assertTrue(response.contains("Connection: close\r\n") && response.endsWith("alpha\nEOF"), response);
        final long finNs = sent.with(TcpFlags.FIN).getFirst().atNs();
        // The client has the response and our FIN, and keeps its side open.
        sim.runFor(finNs + (HttpFileService.LINGER_SECONDS - 1) * SECOND - sim.nowNs());
        assertEquals(List.of(), sent.with(TcpFlags.RST));
        sim.runFor(3 * SECOND);
        final List<Segment> resets = sent.with(TcpFlags.RST);
        assertEquals(1, resets.size(), "one reset: " + sent.segments);
        final long lingeredNs = resets.getFirst().atNs() - finNs;
        assertTrue(lingeredNs >= HttpFileService.LINGER_SECONDS * SECOND
            && lingeredNs <= (HttpFileService.LINGER_SECONDS + 2) * SECOND,
            "reset " + lingeredNs + " ns after the FIN");
        assertEquals(1, counter("http.conn.linger_timeouts"));
        assertEquals(0, counter("http.conn.send_timeouts"));
        assertEquals(0, http.connections());
    }

    @Test
    void aTimeoutOfZeroClosesAfterEachResponse() throws Exception {
        final TcpConnection connection = startAndConnect(0);
        final String response = fetch(connection);
        assertTrue(response.contains("Connection: close\r\n") && response.endsWith("alpha\nEOF"), response);
        assertEquals(0, idleTimeouts(), "closed for keep-alive being off, not for idleness");
        connection.close();
        sim.runFor(SECOND);
        assertEquals(List.of(), sent.with(TcpFlags.RST));
    }
}
