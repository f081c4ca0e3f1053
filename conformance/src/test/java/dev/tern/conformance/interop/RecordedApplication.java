package dev.tern.conformance.interop;

import dev.tern.conformance.replay.ReplayScript;
import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.tcp.TcpOptions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tern's application while a capture is recorded: each call on a socket is made on the stack (owned by the calling
 * thread, {@link VethRig#startTernHereForReplay}) and written down, just after, as a {@link ReplayScript} action, so
 * that {@code Replay} can make the same call at the same moment. Just after: what a call makes the stack send leaves
 * at the next poll, so the recorded time is never later than the frames it caused, however long the call took (the
 * first call of a kind loads classes). Waits poll the stack. Data written is
 * {@link ReplayScript#pattern}.
 */
final class RecordedApplication implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final VethRig rig;
    private final NetStack stack;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment buffer = arena.allocate(65536);
    private final Map<Integer, UdpSocket> udp = new HashMap<>();
    private final Map<Integer, TcpListener> listeners = new HashMap<>();
    private final Map<Integer, TcpConnection> connections = new HashMap<>();

    RecordedApplication(VethRig rig) {
        this.rig = rig;
        this.stack = rig.stack();
    }

    private void record(String action) {
        rig.recordAction(action);
    }

    void udpOpen(int sock) throws TernSocketException {
        udp.put(sock, stack.openUdp());
        record("udp-open sock=" + sock);
    }

    void udpBind(int sock, int port) throws TernSocketException {
        udp.get(sock).bind(port);
        record("udp-bind sock=" + sock + " port=" + port);
    }

    void udpConnect(int sock, int address, int port) throws TernSocketException {
        udp.get(sock).connect(address, port);
        record("udp-connect sock=" + sock + " " + Ipv4Address.format(address) + " port=" + port);
    }

    void udpSend(int sock, int address, int port, int length, int seed) throws TernSocketException {
        final byte[] data = ReplayScript.pattern(length, seed);
        assertTrue(udp.get(sock).sendTo(address, port, MemorySegment.ofArray(data), 0, length));
        record("udp-send sock=" + sock + " " + Ipv4Address.format(address) + " port=" + port + " length=" + length + " pattern=" + seed);
    }

    /** Polls until a datagram waits on {@code sock}. */
    void awaitDatagram(int sock) {
        assertTrue(rig.pollUntil(() -> (udp.get(sock).readyOps() & SelectableSocket.READ) != 0, WAIT), "a datagram came");
    }

    /** Waits for a datagram, takes it and sends it back to its source; returns its length. */
    int udpEcho(int sock) throws TernSocketException {
        awaitDatagram(sock);
        final UdpSocket socket = udp.get(sock);
        final int length = socket.receive(buffer, 0, 65536);
        assertTrue(socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer, 0, length));
        record("udp-echo sock=" + sock);
        return length;
    }

    /** Waits for a datagram and takes it; returns its length. */
    int udpReceive(int sock) throws TernSocketException {
        awaitDatagram(sock);
        final int result = udp.get(sock).receive(buffer, 0, 65536);
        record("udp-receive sock=" + sock);
        return result;
    }

    void udpJoin(int sock, int group, int... sources) {
        if (sources.length == 0) {
            udp.get(sock).join(group);
            record("udp-join sock=" + sock + " " + Ipv4Address.format(group));
        } else {
            udp.get(sock).joinSources(group, sources);
            record("udp-join sock=" + sock + " " + Ipv4Address.format(group) + " sources="
                + Arrays.stream(sources).mapToObj(Ipv4Address::format).collect(Collectors.joining(",")));
        }
    }

    void udpLeave(int sock, int group) {
        udp.get(sock).leave(group);
        record("udp-leave sock=" + sock + " " + Ipv4Address.format(group));
    }

    void udpClose(int sock) {
        udp.remove(sock).close();
        record("udp-close sock=" + sock);
    }

    void tcpListen(int lsn, int port) throws TernSocketException {
        listeners.put(lsn, stack.listen(port, 16));
        record("tcp-listen lsn=" + lsn + " port=" + port);
    }

    /** Polls until a connection is established on {@code lsn}, then takes it. */
    TcpConnection tcpAccept(int conn, int lsn) throws TernSocketException {
        final TcpListener listener = listeners.get(lsn);
        assertTrue(rig.pollUntil(() -> (listener.readyOps() & SelectableSocket.READ) != 0, WAIT), "a connection came");
        final TcpConnection connection = listener.accept();
        record("tcp-accept conn=" + conn + " lsn=" + lsn);
        assertNotNull(connection);
        connections.put(conn, connection);
        return connection;
    }

    /** Connects and polls until established. */
    TcpConnection tcpConnect(int conn, int address, int port, int localPort) throws TernSocketException {
        final TcpConnection connection = stack.connect(address, port, localPort, TcpOptions.DEFAULT);
        record("tcp-connect conn=" + conn + " " + Ipv4Address.format(address) + " port=" + port + " local=" + localPort);
        connections.put(conn, connection);
        assertTrue(rig.pollUntil(connection::isConnected, WAIT), "connected");
        return connection;
    }

    void tcpWrite(int conn, int length, int seed) throws TernSocketException {
        final byte[] data = ReplayScript.pattern(length, seed);
        assertEquals(length, connections.get(conn).write(MemorySegment.ofArray(data), 0, length), "all fit the send ring");
        record("tcp-write conn=" + conn + " length=" + length + " pattern=" + seed);
    }

    /**
     * Reads what arrives until the end of the stream, recording each read that took bytes (a read at the end of the
     * stream changes nothing on the wire); returns the number of bytes.
     */
    long tcpReadToEnd(int conn) throws TernSocketException {
        final TcpConnection connection = connections.get(conn);
        long total = 0;
        while (true) {
            assertTrue(rig.pollUntil(() -> (connection.readyOps() & SelectableSocket.READ) != 0, WAIT), "data or the end came");
            final int available = connection.available();
            if (available == 0) {
                assertEquals(-1, connection.read(buffer, 0, 65536));
                return total;
            }
            final int length = Math.min(available, 65536);
            assertEquals(length, connection.read(buffer, 0, length));
            record("tcp-read conn=" + conn + " length=" + length);
            total += length;
        }
    }

    void tcpShutdown(int conn) {
        connections.get(conn).shutdownOutput();
        record("tcp-shutdown conn=" + conn);
    }

    void tcpClose(int conn) {
        connections.remove(conn).close();
        record("tcp-close conn=" + conn);
    }

    void tcpCloseListener(int lsn) {
        listeners.remove(lsn).close();
        record("tcp-close-listener lsn=" + lsn);
    }

    TcpConnection connection(int conn) {
        return connections.get(conn);
    }

    @Override
    public void close() {
        arena.close();
    }
}
