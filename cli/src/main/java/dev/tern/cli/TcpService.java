package dev.tern.cli;

import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import org.agrona.collections.ArrayListUtil;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;

/**
 * A TCP server polled from the command's loop: accepts every connection and hands each one's data to
 * {@link #serve}. Echo (RFC 862) and discard (RFC 863) are the two-line subclasses below; {@link HttpFileService}
 * is the third.
 */
abstract class TcpService implements AutoCloseable {
    private final TcpListener listener;
    private final ConnectionTraces traces;
    /** The stack's clock, read once per poll: virtual time under a simulation. */
    private final dev.tern.core.time.Clock clock;
    /** When the current poll began, on the stack's clock; what {@link #serve} measures idleness against. */
    protected long pollNs;
    private final ArrayList<TcpConnection> connections = new ArrayList<>();
    // Shared, not confined: tern serve --shards makes each shard's services on the main thread and polls them on the
    // shard's own.
    private final Arena arena = Arena.ofShared();
    protected final MemorySegment buffer = arena.allocate(64 * 1024);

    /** With default options, untraced (the memory link's in-process peer). */
    TcpService(NetStack stack, int port) throws TernSocketException {
        this(stack, port, TcpOptions.DEFAULT, new ConnectionTraces(null, true));
    }

    TcpService(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
        this.listener = stack.listen(port, 128, options);
        this.traces = traces;
        this.clock = stack.clock();
    }

    /** Accepts, serves and reaps connections; returns the work done. */
    final int poll() {
        pollNs = clock.nanoTime();
        int work = 0;
        try {
            TcpConnection accepted;
            while ((accepted = listener.accept()) != null) {
                connections.add(accepted);
                traces.attach(accepted);
                opened(accepted);
                work++;
            }
        } catch (TernSocketException e) {
            // the listener closed under us: nothing more to accept
        }
        // Indexed, removing by moving the last connection into the gap (Agrona's fastUnorderedRemove): no iterator
        // per poll (perf showed ArrayList.iterator as a compiled frame of its own under a SYN flood, so not
        // scalar-replaced).
        for (int i = 0; i < connections.size(); ) {
            final TcpConnection connection = connections.get(i);
            try {
                final int done = serve(connection);
                if (done < 0) {
                    closing(connection);
                    traces.detach(connection);
                    connection.close();
                    ArrayListUtil.fastUnorderedRemove(connections, i);
                    continue;
                }
                work += done;
            } catch (TernSocketException e) {
                closing(connection);
                traces.detach(connection);
                connection.abort();
                ArrayListUtil.fastUnorderedRemove(connections, i);
                continue;
            }
            i++;
        }
        return work;
    }

    /** A connection was accepted. */
    protected void opened(TcpConnection connection) {
    }

    /** A connection is about to be closed (finished, or failed): release what was kept for it. */
    protected void closing(TcpConnection connection) {
    }

    /** Serves what arrived; returns the work done, or -1 when the connection is finished and may be closed. */
    protected abstract int serve(TcpConnection connection) throws TernSocketException;

    @Override
    public void close() {
        for (TcpConnection connection : connections) {
            closing(connection);
            traces.detach(connection);
            connection.close();
        }
        listener.close();
        arena.close();
    }

    /** TCP echo (RFC 862): what arrives goes back; the end of the stream closes. */
    static final class Echo extends TcpService {
        Echo(NetStack stack, int port) throws TernSocketException {
            super(stack, port);
        }

        Echo(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
            super(stack, port, options, traces);
        }

        @Override
        protected int serve(TcpConnection connection) throws TernSocketException {
            // Take only what the send ring can hold now: a slow reader slows the echo, nothing is dropped.
            final int room = Math.min((int) buffer.byteSize(), connection.writableBytes());
            final int n = room == 0 ? 0 : connection.read(buffer, 0, room);
            if (n < 0) {
                connection.shutdownOutput();
                return connection.unsent() == 0 ? -1 : 0;
            }
            if (n > 0) {
                connection.write(buffer, 0, n);
            }
            return n;
        }
    }

    /**
     * TCP discard (RFC 863): what arrives is dropped; the end of the stream closes. It takes the bytes through a receive
     * handler that takes everything and looks at nothing, so the stack copies none of them (zero-copy receive).
     */
    static final class Discard extends TcpService {
        private static final TcpConnection.ReceiveHandler DROP = (connection, data, offset, length) -> length;

        Discard(NetStack stack, int port) throws TernSocketException {
            super(stack, port);
        }

        Discard(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
            super(stack, port, options, traces);
        }

        @Override
        protected void opened(TcpConnection connection) {
            try {
                connection.receiveHandler(DROP);
            } catch (TernSocketException e) {
                // closed already: serve finds it ended
            }
        }

        @Override
        protected int serve(TcpConnection connection) throws TernSocketException {
            if (connection.isEnded() && connection.error() != dev.tern.core.io.SocketError.NONE) {
                throw TernSocketException.of(connection.error(), "tcp discard");
            }
            return connection.isEndOfStream() || connection.isEnded() ? -1 : 0;
        }
    }
}
