package dev.tern.nio;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;

/**
 * The {@link ServerSocket} that {@link TernServerSocketChannel#socket()} hands out: binds, options and close go to
 * the channel; {@link #accept()} (blocking mode only, as the JDK's adaptor) returns the accepted channel's socket,
 * waiting at most {@code SO_TIMEOUT}.
 */
final class ServerSocketAdaptor extends ServerSocket {
    private final TernServerSocketChannel channel;
    private volatile int timeoutMs;

    private ServerSocketAdaptor(TernServerSocketChannel channel) throws IOException {
        super(new UnusedSocketImpl());
        this.channel = channel;
    }

    static ServerSocketAdaptor of(TernServerSocketChannel channel) {
        try {
            return new ServerSocketAdaptor(channel);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public ServerSocketChannel getChannel() {
        return channel;
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        bind(local, 50);
    }

    @Override
    public void bind(SocketAddress local, int backlog) throws IOException {
        channel.bind(local, backlog);
    }

    private InetSocketAddress local() {
        try {
            return channel.getLocalAddress() instanceof InetSocketAddress inet ? inet : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public InetAddress getInetAddress() {
        final InetSocketAddress local = local();
        return local == null ? null : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        final InetSocketAddress local = local();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local();
    }

    @Override
    public Socket accept() throws IOException {
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        final int timeout = timeoutMs;
        if (timeout == 0) {
            return channel.accept().socket();
        }
        final long deadline = System.nanoTime() + timeout * 1_000_000L;
        channel.configureBlocking(false);
        try {
            SocketChannel accepted;
            while ((accepted = channel.accept()) == null) {
                if (System.nanoTime() - deadline > 0) {
                    throw new SocketTimeoutException("Accept timed out");
                }
                Thread.sleep(1);
            }
            accepted.configureBlocking(true);
            return accepted.socket();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SocketException("interrupted");
        } finally {
            if (channel.isOpen()) {
                channel.configureBlocking(true);
            }
        }
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
    public void setReuseAddress(boolean on) throws SocketException {
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, on);
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        try {
            return channel.getOption(StandardSocketOptions.SO_REUSEADDR);
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("negative receive size");
        }
        try {
            channel.setOption(StandardSocketOptions.SO_RCVBUF, size);
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        try {
            return channel.getOption(StandardSocketOptions.SO_RCVBUF);
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
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
    public boolean isBound() {
        return local() != null;
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return isBound() ? "ServerSocket[addr=" + getInetAddress() + ",localport=" + getLocalPort() + "]" : "ServerSocket[unbound]";
    }
}
