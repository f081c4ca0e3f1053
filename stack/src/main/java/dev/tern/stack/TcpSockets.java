package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.tcp.TcpError;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpLayer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The bridge between {@code TcpLayer}'s handles and the public socket objects of one stack: it receives every TCP
 * event (on the stack thread) and hands it to the {@link TcpConnection} or {@link TcpListener} it is about, and
 * it carries application threads' "I wrote" / "I read" notices to the stack thread.
 *
 * <p>Lookups by handle go through Agrona's {@link Int2ObjectHashMap}: no boxing, nothing allocated per event.
 */
final class TcpSockets implements TcpEvents {
    private final Int2ObjectHashMap<TcpConnection> connections = new Int2ObjectHashMap<>();
    private final Int2ObjectHashMap<TcpListener> listeners = new Int2ObjectHashMap<>();
    private final ManyToOneConcurrentArrayQueue<TcpConnection> notices;

    TcpSockets(int capacity) {
        this.notices = new ManyToOneConcurrentArrayQueue<>(capacity);
    }

    /**
     * The socket error a TCP error stands for, matched by name: TCP's codes are its own ({@link TcpError}), and the
     * socket API's typed exceptions follow {@link SocketError}.
     */
    static int socketError(int tcpError) {
        return switch (tcpError) {
            case TcpError.NONE -> SocketError.NONE;
            case TcpError.REFUSED -> SocketError.CONNECTION_REFUSED;
            case TcpError.RESET -> SocketError.CONNECTION_RESET;
            case TcpError.TIMED_OUT -> SocketError.TIMED_OUT;
            case TcpError.HOST_UNREACHABLE -> SocketError.HOST_UNREACHABLE;
            case TcpError.NET_UNREACHABLE -> SocketError.NET_UNREACHABLE;
            case TcpError.ADDRESS_IN_USE -> SocketError.ADDRESS_IN_USE;
            case TcpError.NO_BUFFER -> SocketError.NO_BUFFER;
            case TcpError.TOO_MANY_CONNECTIONS -> SocketError.TOO_MANY_SOCKETS;
            case TcpError.ADDRESS_NOT_AVAILABLE -> SocketError.ADDRESS_NOT_AVAILABLE;
            case TcpError.ABORTED -> SocketError.ABORTED;
            default -> SocketError.INVALID;
        };
    }

    void add(int handle, TcpConnection connection) {
        connections.put(handle, connection);
    }

    void remove(int handle) {
        connections.remove(handle);
    }

    void addListener(int listener, TcpListener socket) {
        listeners.put(listener, socket);
    }

    void removeListener(int listener) {
        listeners.remove(listener);
    }

    /**
     * Stack thread, the stack stopping: every listener stops (its SYN and accept queues reset, RFC 9293 §3.10.5, as
     * Linux does); returns how many.
     */
    int closeListeners(TcpLayer tcp, long nowNs) {
        int closed = 0;
        for (Int2ObjectHashMap<TcpListener>.KeyIterator it = listeners.keySet().iterator(); it.hasNext(); ) {
            tcp.closeListener(it.nextInt(), nowNs);
            closed++;
        }
        listeners.clear();
        return closed;
    }

    /** Stack thread, a graceful stop: every connection's output ends with a FIN after its queued data; returns how many. */
    int finishConnections(TcpLayer tcp, long nowNs) {
        int finished = 0;
        for (Int2ObjectHashMap<TcpConnection>.KeyIterator it = connections.keySet().iterator(); it.hasNext(); ) {
            if (tcp.shutdownOutput(it.nextInt(), nowNs) >= 0) {
                finished++;
            }
        }
        return finished;
    }

    /** Any thread: {@code connection} has a notice for the stack (data written, data read). */
    void notice(TcpConnection connection) {
        while (!notices.offer(connection)) {
            Thread.onSpinWait();
        }
        connection.stack().wakeIfAsleep();
    }

    /** Whether notices wait for the stack's thread. */
    boolean hasNotices() {
        return !notices.isEmpty();
    }

    /** Stack thread: passes the notices on to the TCP layer; returns how many. */
    int drainNotices(long nowNs) {
        int count = 0;
        TcpConnection connection;
        while ((connection = notices.poll()) != null) {
            connection.applyNotices(nowNs);
            count++;
        }
        return count;
    }

    @Override
    public void acceptable(int listener) {
        final TcpListener socket = listeners.get(listener);
        if (socket != null) {
            socket.onAcceptable();
        }
    }

    @Override
    public void established(int connection) {
        final TcpConnection socket = connections.get(connection);
        if (socket != null) {
            socket.onEstablished();
        }
    }

    @Override
    public void readable(int connection) {
        final TcpConnection socket = connections.get(connection);
        if (socket != null) {
            socket.onReadable();
        }
    }

    @Override
    public void writable(int connection) {
        final TcpConnection socket = connections.get(connection);
        if (socket != null) {
            socket.onWritable();
        }
    }

    @Override
    public void closed(int connection, int error) {
        final TcpConnection socket = connections.get(connection);
        if (socket != null) {
            socket.onClosed(error);
        }
    }
}
