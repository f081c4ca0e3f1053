package dev.tern.nio;

import dev.tern.core.io.SocketError;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Set;

/**
 * A {@link ServerSocketChannel} served by a Tern {@link TcpListener} or, when the rules say so (a bind to a
 * host address, to loopback, or to a port the rules give the kernel), by a kernel channel. Decided at {@link #bind}.
 * Accepted channels are {@link TernSocketChannel}s on the same side. On a sharded stack the channel listens on every
 * shard (the link steers each connection's SYN to one) and accepts from them in turn.
 *
 * <p>Thread-safe as the JDK's. Deviation: {@code SO_RCVBUF} set on the listener sizes its accepted connections'
 * receive rings (Tern has no listener buffer of its own).
 */
final class TernServerSocketChannel extends ServerSocketChannel implements TernChannel {
    static final Set<SocketOption<?>> TERN_OPTIONS = Set.of(StandardSocketOptions.SO_RCVBUF,
        StandardSocketOptions.SO_REUSEADDR);

    private final TernSelectorProvider ternProvider;
    private final ChannelKeys keys = new ChannelKeys();
    private final Object lock = new Object();
    /** Held by a thread in accept (which may block), so that it never holds up the address and option calls. */
    private final Object acceptLock = new Object();
    private volatile ServerSocketChannel kernel;
    /** The listener on each shard, in shard order; null until bound on Tern. */
    private volatile TcpListener[] listeners;
    /** The shard whose listener is asked first at the next accept. Guarded by acceptLock. */
    private int acceptTurn;
    private InetSocketAddress localAddress;
    private boolean reuseAddress = true;
    private int receiveBuffer;
    private ServerSocketAdaptor adaptor;

    TernServerSocketChannel(TernSelectorProvider provider, ProtocolFamily family) {
        super(provider);
        this.ternProvider = provider;
    }

    static TernServerSocketChannel kernel(TernSelectorProvider provider, ServerSocketChannel kernelChannel) {
        final TernServerSocketChannel channel = new TernServerSocketChannel(provider, null);
        channel.kernel = kernelChannel;
        provider.countKernelChannel();
        return channel;
    }

    @Override
    public SelectableSocket ternSocket() {
        final TcpListener[] l = listeners;
        return l == null ? null : l[0];
    }

    @Override
    public SelectableSocket[] ternSockets() {
        final TcpListener[] l = listeners;
        return l == null ? null : Arrays.copyOf(l, l.length, SelectableSocket[].class);
    }

    @Override
    public SelectableChannel kernelChannel() {
        return kernel;
    }

    @Override
    public ChannelKeys keys() {
        return keys;
    }

    @Override
    public int ternInterest(int interestOps) {
        return (interestOps & SelectionKey.OP_ACCEPT) != 0 ? SelectableSocket.READ | SelectableSocket.ERROR : 0;
    }

    @Override
    public int translateReadyOps(int ternReady, int interestOps) {
        if ((ternReady & SelectableSocket.ERROR) != 0) {
            return interestOps;
        }
        return (ternReady & SelectableSocket.READ) != 0 ? interestOps & SelectionKey.OP_ACCEPT : 0;
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        ServerSocketChannel k;
        synchronized (lock) {
            Channels.ensureOpen(isOpen());
            k = kernel;
            if (k == null) {
                if (listeners != null) {
                    throw new AlreadyBoundException();
                }
                final InetSocketAddress address = local == null ? new InetSocketAddress(0) : Addresses.checked(local);
                if (ternProvider.rules().listen(Rules.Transport.TCP, address) == Rules.Side.TERN
                    && ternProvider.ternOrFallback() == Rules.Side.TERN) {
                    listen(address.getPort(), backlog < 1 ? 50 : backlog);
                    keys.decided();
                    return this;
                }
                k = ternProvider.kernel().openServerSocketChannel();
                k.setOption(StandardSocketOptions.SO_REUSEADDR, reuseAddress);
                if (receiveBuffer > 0) {
                    k.setOption(StandardSocketOptions.SO_RCVBUF, receiveBuffer);
                }
                k.configureBlocking(isBlocking());
                kernel = k;
                ternProvider.countKernelChannel();
            }
        }
        keys.decided();
        k.bind(local, backlog);
        return this;
    }

    /** Listens on {@code port} on every shard, or on the first port of TCP's ephemeral range free on all for 0. */
    private void listen(int port, int backlog) throws IOException {
        final NetStack stack = ternProvider.stack();
        final TcpOptions options = receiveBuffer > 0 ? TcpOptions.DEFAULT.withBuffers(0, Channels.ringSize(receiveBuffer))
            : TcpOptions.DEFAULT;
        TcpListener[] made = null;
        try {
            if (port != 0) {
                made = ternProvider.listen(port, backlog, options);
            } else {
                final var config = stack.tcp().config();
                for (int candidate = config.ephemeralFirst(); made == null; candidate++) {
                    try {
                        made = ternProvider.listen(candidate, backlog, options);
                    } catch (TernSocketException e) {
                        if (e.error() != SocketError.ADDRESS_IN_USE || candidate >= config.ephemeralLast()) {
                            throw e;
                        }
                    }
                }
            }
        } catch (TernSocketException e) {
            throw Errors.translate(e);
        }
        listeners = made;
        localAddress = Addresses.socket(stack.address().address(), made[0].port());
        final NioCounters counters = ternProvider.counters();
        if (counters != null) {
            counters.add(counters.listenersOpened, 1);
        }
    }

    @Override
    public SocketChannel accept() throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            final SocketChannel accepted = k.accept();
            return accepted == null ? null : TernSocketChannel.accepted(ternProvider, accepted);
        }
        synchronized (acceptLock) {
            Channels.ensureOpen(isOpen());
            final TcpListener[] l = listeners;
            if (l == null) {
                throw new NotYetBoundException();
            }
            TcpConnection accepted = acceptOnce(l);
            if (accepted == null && isBlocking()) {
                boolean completed = false;
                try {
                    begin();
                    while ((accepted = acceptOnce(l)) == null && isOpen()) {
                        if (l.length == 1) {
                            l[0].awaitReady(SelectableSocket.READ, Channels.sliceDeadline());
                        } else {
                            SelectableSocket.awaitAny(l, SelectableSocket.READ, Channels.sliceDeadline());
                        }
                    }
                    completed = accepted != null;
                } finally {
                    end(completed);
                }
            }
            if (accepted == null) {
                return null;
            }
            // A dual-stack listener, as the JDK's on [::]: IPv4 peers come as Inet4Addresses, IPv6 ones as Inet6.
            final InetSocketAddress remote = Addresses.remote(accepted);
            final InetSocketAddress local;
            final int buffer;
            synchronized (lock) {
                local = accepted.ipv6() ? Addresses.local(accepted, 0) : localAddress;
                buffer = receiveBuffer;
            }
            return new TernSocketChannel(ternProvider, accepted, local, remote, buffer);
        }
    }

    /** A connection from the first shard that has one, starting after the shard that gave the last. */
    private TcpConnection acceptOnce(TcpListener[] l) throws IOException {
        try {
            for (int i = 0; i < l.length; i++) {
                final int k = (acceptTurn + i) % l.length;
                final TcpConnection accepted = l[k].accept();
                if (accepted != null) {
                    acceptTurn = k + 1;
                    return accepted;
                }
            }
            return null;
        } catch (TernSocketException e) {
            throw Errors.translate(e);
        }
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            return k.getLocalAddress();
        }
        Channels.ensureOpen(isOpen());
        synchronized (lock) {
            return localAddress;
        }
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            k.setOption(name, value);
            return this;
        }
        Channels.checkOption(name, value, TERN_OPTIONS);
        synchronized (lock) {
            Channels.ensureOpen(isOpen());
            if (name == StandardSocketOptions.SO_REUSEADDR) {
                // Tern lets a listener take a port whose old connections linger in TIME-WAIT whatever this says (the
                // kernel's behaviour with SO_REUSEADDR on); the value is kept for getOption and a kernel side.
                reuseAddress = (Boolean) value;
            } else {
                final int size = (Integer) value;
                if (size <= 0) {
                    throw new IllegalArgumentException("Invalid receive buffer size: " + size);
                }
                receiveBuffer = size;
            }
        }
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            return k.getOption(name);
        }
        Channels.checkSupported(name, TERN_OPTIONS);
        synchronized (lock) {
            Channels.ensureOpen(isOpen());
            if (name == StandardSocketOptions.SO_REUSEADDR) {
                return (T) Boolean.valueOf(reuseAddress);
            }
            return (T) Integer.valueOf(receiveBuffer > 0 ? Channels.ringSize(receiveBuffer)
                : ternProvider.stack().tcp().config().receiveBufferSize());
        }
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        final ServerSocketChannel k = kernel;
        return k != null ? k.supportedOptions() : TERN_OPTIONS;
    }

    @Override
    public ServerSocket socket() {
        synchronized (lock) {
            if (adaptor == null) {
                adaptor = ServerSocketAdaptor.of(this);
            }
            return adaptor;
        }
    }

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            k.configureBlocking(block);
        }
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        final ServerSocketChannel k = kernel;
        if (k != null) {
            k.close();
        }
        final TcpListener[] l = listeners;
        if (l != null) {
            for (TcpListener listener : l) {
                listener.close();
                listener.stopWaiting();
            }
            final NioCounters counters = ternProvider.counters();
            if (counters != null) {
                counters.add(counters.listenersClosed, 1);
            }
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + (!isOpen() ? "closed" : kernel != null ? "kernel " + kernel
            : localAddress == null ? "unbound" : localAddress.toString()) + "]";
    }
}
