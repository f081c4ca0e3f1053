package dev.tern.nio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.SocketOptions;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The classic {@code java.net.Socket} and {@code ServerSocket} on Tern's channels: a {@link SocketImpl} that
 * {@code tern exec}'s agent installs with {@code Socket.setSocketImplFactory} and {@code ServerSocket.setSocketFactory}
 * (the only hooks the JDK leaves for them; deprecated, one per JVM). Each socket becomes a {@link TernSocketChannel}
 * or {@link TernServerSocketChannel} of the system-wide provider, so the rules decide Tern or the kernel as for NIO
 * code, and loopback keeps working through the kernel.
 *
 * <p>Streams are the channel adaptor's (blocking; {@code SO_TIMEOUT} bounds reads). A connect with a timeout and an
 * accept with {@code SO_TIMEOUT} wait in slices on the channel. Used by one socket; the JDK's {@code Socket}
 * serialises what needs it.
 */
final class TernSocketImpl extends SocketImpl {
    private static final long SLICE_MS = 1;

    private final TernSelectorProvider provider;
    private TernSocketChannel channel;
    private TernServerSocketChannel server;
    private InetSocketAddress bindAddress;
    private int timeoutMs;
    /** Options set before the channel exists, applied when it is made. */
    private final Map<SocketOption<Object>, Object> pending = new LinkedHashMap<>();

    TernSocketImpl(TernSelectorProvider provider) {
        this.provider = provider;
    }

    @Override
    protected void create(boolean stream) throws IOException {
        if (!stream) {
            throw new SocketException("Tern's SocketImpl is for stream sockets");
        }
    }

    @Override
    protected void connect(String host, int port) throws IOException {
        connect(new InetSocketAddress(host, port), 0);
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        connect(new InetSocketAddress(address, port), 0);
    }

    @Override
    protected void connect(SocketAddress remote, int timeout) throws IOException {
        final TernSocketChannel made = (TernSocketChannel) provider.openSocketChannel();
        channel = made;
        applyPending(made);
        if (bindAddress != null) {
            made.bind(bindAddress);
        }
        if (timeout <= 0) {
            made.connect(remote);
        } else {
            made.configureBlocking(false);
            final long deadline = System.nanoTime() + timeout * 1_000_000L;
            if (!made.connect(remote)) {
                while (!made.finishConnect()) {
                    if (System.nanoTime() - deadline > 0) {
                        made.close();
                        throw new SocketTimeoutException("Connect timed out");
                    }
                    sleep();
                }
            }
            made.configureBlocking(true);
        }
        final InetSocketAddress connected = (InetSocketAddress) made.getRemoteAddress();
        address = connected.getAddress();
        port = connected.getPort();
        localport = ((InetSocketAddress) made.getLocalAddress()).getPort();
    }

    private static void sleep() throws SocketException {
        try {
            Thread.sleep(SLICE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SocketException("interrupted");
        }
    }

    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        bindAddress = new InetSocketAddress(host, port);
        localport = port;
    }

    @Override
    protected void listen(int backlog) throws IOException {
        final TernServerSocketChannel made = (TernServerSocketChannel) provider.openServerSocketChannel();
        server = made;
        for (Map.Entry<SocketOption<Object>, Object> option : pending.entrySet()) {
            if (made.supportedOptions().contains(option.getKey())) {
                made.setOption(option.getKey(), option.getValue());
            }
        }
        made.bind(bindAddress, backlog);
        localport = ((InetSocketAddress) made.getLocalAddress()).getPort();
    }

    @Override
    protected void accept(SocketImpl into) throws IOException {
        if (!(into instanceof TernSocketImpl target)) {
            throw new SocketException("a Tern server socket accepts into Tern sockets only");
        }
        SocketChannel accepted;
        if (timeoutMs == 0) {
            accepted = server.accept();
        } else {
            final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            server.configureBlocking(false);
            try {
                while ((accepted = server.accept()) == null) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new SocketTimeoutException("Accept timed out");
                    }
                    sleep();
                }
            } finally {
                if (server.isOpen()) {
                    server.configureBlocking(true);
                }
            }
            accepted.configureBlocking(true);
        }
        target.channel = (TernSocketChannel) accepted;
        final InetSocketAddress remote = (InetSocketAddress) accepted.getRemoteAddress();
        target.address = remote.getAddress();
        target.port = remote.getPort();
        target.localport = ((InetSocketAddress) accepted.getLocalAddress()).getPort();
    }

    private Socket adaptor() throws SocketException {
        if (channel == null) {
            throw new SocketException("Socket is not connected");
        }
        final Socket socket = channel.socket();
        socket.setSoTimeout(timeoutMs);
        return socket;
    }

    @Override
    protected InputStream getInputStream() throws IOException {
        return adaptor().getInputStream();
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        return adaptor().getOutputStream();
    }

    @Override
    protected int available() throws IOException {
        return channel == null ? 0 : channel.available();
    }

    @Override
    protected void close() throws IOException {
        if (channel != null) {
            channel.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected void shutdownInput() throws IOException {
        adaptor().shutdownInput();
    }

    @Override
    protected void shutdownOutput() throws IOException {
        adaptor().shutdownOutput();
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        throw new SocketException("Urgent data not supported");
    }

    // ------------------------------------------------------------------------------------------ options

    @SuppressWarnings("unchecked")
    private static SocketOption<Object> standard(int id) {
        return (SocketOption<Object>) (SocketOption<?>) switch (id) {
            case SocketOptions.TCP_NODELAY -> StandardSocketOptions.TCP_NODELAY;
            case SocketOptions.SO_KEEPALIVE -> StandardSocketOptions.SO_KEEPALIVE;
            case SocketOptions.SO_REUSEADDR -> StandardSocketOptions.SO_REUSEADDR;
            case SocketOptions.SO_RCVBUF -> StandardSocketOptions.SO_RCVBUF;
            case SocketOptions.SO_SNDBUF -> StandardSocketOptions.SO_SNDBUF;
            case SocketOptions.SO_LINGER -> StandardSocketOptions.SO_LINGER;
            case SocketOptions.IP_TOS -> StandardSocketOptions.IP_TOS;
            default -> null;
        };
    }

    private java.nio.channels.NetworkChannel current() {
        return channel != null ? channel : server;
    }

    @Override
    public void setOption(int id, Object value) throws SocketException {
        if (id == SocketOptions.SO_TIMEOUT) {
            timeoutMs = (Integer) value;
            if (channel != null) {
                channel.socket().setSoTimeout(timeoutMs); // the streams read it from the adaptor
            }
            return;
        }
        if (id == SocketOptions.SO_OOBINLINE) {
            if (Boolean.TRUE.equals(value)) {
                throw new SocketException("OOBINLINE not supported on Tern");
            }
            return;
        }
        final SocketOption<Object> option = standard(id);
        if (option == null) {
            throw new SocketException("unknown option " + id);
        }
        final Object converted = id == SocketOptions.SO_LINGER
            ? (value instanceof Integer seconds ? seconds : Integer.valueOf(-1)) : value;
        set(option, converted);
    }

    private void set(SocketOption<Object> option, Object value) throws SocketException {
        try {
            final java.nio.channels.NetworkChannel target = current();
            if (target == null) {
                if (!TernSocketChannel.TERN_OPTIONS.contains(option)) {
                    throw new SocketException("'" + option + "' not supported");
                }
                pending.put(option, value);
            } else {
                target.setOption(option, value);
            }
        } catch (UnsupportedOperationException e) {
            throw new SocketException(e.getMessage());
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public Object getOption(int id) throws SocketException {
        if (id == SocketOptions.SO_TIMEOUT) {
            return timeoutMs;
        }
        if (id == SocketOptions.SO_OOBINLINE) {
            return Boolean.FALSE;
        }
        try {
            if (id == SocketOptions.SO_BINDADDR) {
                final java.nio.channels.NetworkChannel target = current();
                final SocketAddress local = target == null ? bindAddress : target.getLocalAddress();
                return local instanceof InetSocketAddress inet ? inet.getAddress() : new InetSocketAddress(0).getAddress();
            }
            final SocketOption<Object> option = standard(id);
            if (option == null) {
                throw new SocketException("unknown option " + id);
            }
            final java.nio.channels.NetworkChannel target = current();
            final Object value = target == null ? pending.getOrDefault(option, defaultOf(option)) : target.getOption(option);
            if (id == SocketOptions.SO_LINGER && value instanceof Integer seconds && seconds < 0) {
                return Boolean.FALSE;
            }
            return value;
        } catch (UnsupportedOperationException e) {
            throw new SocketException(e.getMessage());
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    private static Object defaultOf(SocketOption<Object> name) {
        final Object option = name;
        if (option == StandardSocketOptions.SO_LINGER) {
            return -1;
        }
        if (option == StandardSocketOptions.SO_RCVBUF || option == StandardSocketOptions.SO_SNDBUF) {
            return 128 * 1024;
        }
        return Boolean.FALSE;
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        final java.nio.channels.NetworkChannel target = current();
        if (target != null) {
            target.setOption(name, value);
        } else {
            Channels.checkOption(name, value, TernSocketChannel.TERN_OPTIONS);
            @SuppressWarnings("unchecked") final SocketOption<Object> option = (SocketOption<Object>) name;
            pending.put(option, value);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        final java.nio.channels.NetworkChannel target = current();
        if (target != null) {
            return target.getOption(name);
        }
        Channels.checkSupported(name, TernSocketChannel.TERN_OPTIONS);
        return (T) pending.getOrDefault(name, defaultOf((SocketOption<Object>) name));
    }

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        final java.nio.channels.NetworkChannel target = current();
        return target != null ? target.supportedOptions() : TernSocketChannel.TERN_OPTIONS;
    }

    private void applyPending(TernSocketChannel made) throws IOException {
        for (Map.Entry<SocketOption<Object>, Object> option : pending.entrySet()) {
            made.setOption(option.getKey(), option.getValue());
        }
    }

    /**
     * Installs Tern's sockets for {@code new Socket()} and {@code new ServerSocket()}, on the system-wide provider
     * (looked up at the first socket: the agent installs this before the provider exists); false if a factory was
     * set already.
     */
    static boolean install() {
        try {
            installFactories(() -> new TernSocketImpl((TernSelectorProvider) java.nio.channels.spi.SelectorProvider.provider()));
            return true;
        } catch (IOException | IllegalStateException e) {
            return false;
        }
    }

    @SuppressWarnings("deprecation") // the only hooks the JDK has for the classic sockets
    private static void installFactories(java.net.SocketImplFactory factory) throws IOException {
        Socket.setSocketImplFactory(factory);
        java.net.ServerSocket.setSocketFactory(factory);
    }
}
