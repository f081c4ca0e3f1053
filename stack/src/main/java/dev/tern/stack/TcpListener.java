package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;

import java.util.function.Supplier;

/**
 * A listening TCP socket on a {@link NetStack} ({@link NetStack#listen}): completed handshakes wait in its accept
 * queue until {@link #accept} takes them. Readable (for a {@link Selector}) while a connection waits.
 */
public final class TcpListener extends SelectableSocket implements AutoCloseable {
    private final TcpLayer tcp;
    private final TcpSockets sockets;
    private final int listener;
    private final int port;
    private volatile boolean pending;
    private volatile boolean closed;
    /** {@link #acceptNow}, bound once, so that {@link #accept()} makes no lambda at each call. */
    private final Supplier<TcpConnection> acceptOnStackThread;

    private TcpListener(NetStack stack, int listener, int port) {
        super(stack);
        this.tcp = stack.tcp();
        this.sockets = stack.tcpSockets();
        this.listener = listener;
        this.acceptOnStackThread = this::acceptNow;
        this.port = port;
        sockets.addListener(listener, this);
    }

    static TcpListener open(NetStack stack, int port, int backlog, TcpOptions options) throws TernSocketException {
        final Object result = stack.call(() -> {
            final int listener = stack.tcp().listen(port, backlog, options, stack.tcpSockets());
            return listener < 0 ? (Object) Integer.valueOf(-listener) : new TcpListener(stack, listener, port);
        });
        if (result instanceof Integer failure) {
            throw TernSocketException.of(TcpSockets.socketError(failure), "tcp listen on port " + port);
        }
        return (TcpListener) result;
    }

    public int port() {
        return port;
    }

    /**
     * TCP Fast Open (RFC 7413, Linux's {@code TCP_FASTOPEN}): up to {@code queueLength} connections opened by Fast
     * Open may wait for their handshake's last ACK at once, their SYN's data readable before it; 0 turns it off. Takes
     * effect only with the layer's server bit ({@code TcpConfig.fastOpen}, docs/TCP.md). Cold path.
     */
    public void fastOpen(int queueLength) throws TernSocketException {
        final int result = stack.call(() -> tcp.fastOpen().listen(listener, queueLength));
        if (result < 0) {
            throw new TernSocketException(SocketError.INVALID, "tcp Fast Open queue of " + queueLength + " on port "
                + port);
        }
    }

    /**
     * Takes the oldest connection waiting, or returns null when none is. On the stack's own thread, with none waiting,
     * it allocates nothing: a server loop asks at every turn ({@code tern serve} under a SYN flood, where a capturing
     * lambda made here each time was most of what its shard allocated).
     */
    public TcpConnection accept() throws TernSocketException {
        if (closed) {
            throw new TernSocketException(SocketError.NOT_CONNECTED, "tcp accept on a closed listener");
        }
        return stack.call(acceptOnStackThread);
    }

    /** On the stack's thread: the oldest connection waiting, or null. */
    private TcpConnection acceptNow() {
        final int handle = tcp.accept(listener);
        if (handle < 0) {
            pending = false;
            return null;
        }
        pending = tcp.acceptable(listener) > 0;
        return new TcpConnection(stack, handle, true);
    }

    /** Like {@link #accept()}, waiting up to {@code timeoutNs}; null on timeout. */
    public TcpConnection accept(long timeoutNs) throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        TcpConnection connection;
        while ((connection = accept()) == null) {
            if (await(READ, deadline) == 0) {
                return null;
            }
        }
        return connection;
    }

    @Override
    public int readyOps() {
        return pending && !closed ? READ : 0;
    }

    void onAcceptable() {
        pending = true;
        signal();
    }

    /** Stops listening; connections not yet accepted are reset. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stack.call(() -> {
            tcp.closeListener(listener, stack.clock().nanoTime());
            sockets.removeListener(listener);
            return 0;
        });
        final Selector current = selector;
        if (current != null) {
            current.deregister(this);
        }
    }
}
