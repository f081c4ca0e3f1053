package dev.tern.nio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SocketChannel;
import java.util.Set;

/**
 * The {@link Socket} that {@link TernSocketChannel#socket()} hands out, as the JDK's channels hand out theirs: every
 * call goes to the channel (options, addresses, half-close, close), and the streams read and write through it
 * (the channel must be in blocking mode, as for the JDK's adaptor). {@code SO_TIMEOUT} bounds a stream's read.
 * Netty's NIO transport configures its channels through this object.
 */
final class SocketAdaptor extends Socket {
    private final TernSocketChannel channel;
    private volatile int timeoutMs;

    private SocketAdaptor(TernSocketChannel channel) throws SocketException {
        super(new UnusedSocketImpl());
        this.channel = channel;
    }

    static SocketAdaptor of(TernSocketChannel channel) {
        try {
            return new SocketAdaptor(channel);
        } catch (SocketException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public SocketChannel getChannel() {
        return channel;
    }

    @Override
    public void connect(SocketAddress remote) throws IOException {
        connect(remote, 0);
    }

    @Override
    public void connect(SocketAddress remote, int timeout) throws IOException {
        if (remote == null) {
            throw new IllegalArgumentException("connect: The address can't be null");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        channel.connect(remote);
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        channel.bind(local);
    }

    @Override
    public InetAddress getInetAddress() {
        final InetSocketAddress remote = remote();
        return remote == null ? null : remote.getAddress();
    }

    @Override
    public int getPort() {
        final InetSocketAddress remote = remote();
        return remote == null ? 0 : remote.getPort();
    }

    private InetSocketAddress remote() {
        try {
            return channel.getRemoteAddress() instanceof InetSocketAddress inet ? inet : null;
        } catch (IOException e) {
            return null;
        }
    }

    private InetSocketAddress local() {
        try {
            return channel.getLocalAddress() instanceof InetSocketAddress inet ? inet : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public InetAddress getLocalAddress() {
        final InetSocketAddress local = local();
        return local == null ? new InetSocketAddress(0).getAddress() : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        final InetSocketAddress local = local();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return remote();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local();
    }

    @Override
    public InputStream getInputStream() throws IOException {
        if (!channel.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (!channel.isConnected()) {
            throw new SocketException("Socket is not connected");
        }
        return new InputStream() {
            @Override
            public int read() throws IOException {
                final byte[] one = new byte[1];
                final int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] bytes, int offset, int length) throws IOException {
                if (length == 0) {
                    return 0;
                }
                final ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
                final int timeout = timeoutMs;
                if (timeout == 0) {
                    if (!channel.isBlocking()) {
                        throw new IllegalBlockingModeException();
                    }
                    return channel.read(buffer);
                }
                return channel.readWithin(buffer, timeout);
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        if (!channel.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (!channel.isConnected()) {
            throw new SocketException("Socket is not connected");
        }
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                if (!channel.isBlocking()) {
                    throw new IllegalBlockingModeException();
                }
                final ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    private <T> void set(SocketOption<T> option, T value) throws SocketException {
        try {
            channel.setOption(option, value);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    private <T> T get(SocketOption<T> option) throws SocketException {
        try {
            return channel.getOption(option);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(StandardSocketOptions.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(StandardSocketOptions.TCP_NODELAY);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        set(StandardSocketOptions.SO_LINGER, on ? linger : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(StandardSocketOptions.SO_LINGER);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(StandardSocketOptions.SO_KEEPALIVE);
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid send size");
        }
        set(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_SNDBUF);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid receive size");
        }
        set(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        set(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(StandardSocketOptions.IP_TOS);
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMs = timeout;
    }

    @Override
    public int getSoTimeout() {
        return timeoutMs;
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        throw new SocketException("OOBINLINE not supported on Tern");
    }

    @Override
    public boolean getOOBInline() {
        return false;
    }

    @Override
    public void sendUrgentData(int data) throws IOException {
        throw new SocketException("Urgent data not supported");
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        channel.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return channel.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return channel.supportedOptions();
    }

    @Override
    public void shutdownInput() throws IOException {
        channel.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    @Override
    public boolean isConnected() {
        return channel.isConnected();
    }

    @Override
    public boolean isBound() {
        return local() != null;
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public boolean isInputShutdown() {
        final SocketChannel kernel = (SocketChannel) channel.kernelChannel();
        return kernel != null ? kernel.socket().isInputShutdown() : channel.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        final SocketChannel kernel = (SocketChannel) channel.kernelChannel();
        return kernel != null ? kernel.socket().isOutputShutdown() : channel.isOutputShutdown();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return isConnected() ? "Socket[addr=" + getInetAddress() + ",port=" + getPort() + ",localport=" + getLocalPort() + "]"
            : "Socket[unconnected]";
    }

    /** Thrown by a stream read that waited {@code SO_TIMEOUT} for nothing. */
    static SocketTimeoutException timedOut() {
        return new SocketTimeoutException("Read timed out");
    }
}
