package dev.tern.nio;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.SocketImpl;

/**
 * The implementation object {@code java.net.ServerSocket}'s constructor insists on; a Tern adaptor overrides every
 * public method and goes through its channel, so nothing reaches this one.
 */
final class UnusedSocketImpl extends SocketImpl {
    private static UnsupportedOperationException unused() {
        return new UnsupportedOperationException("a Tern socket adaptor goes through its channel");
    }

    @Override
    protected void create(boolean stream) {
        throw unused();
    }

    @Override
    protected void connect(String host, int port) {
        throw unused();
    }

    @Override
    protected void connect(InetAddress address, int port) {
        throw unused();
    }

    @Override
    protected void connect(SocketAddress address, int timeout) {
        throw unused();
    }

    @Override
    protected void bind(InetAddress host, int port) {
        throw unused();
    }

    @Override
    protected void listen(int backlog) {
        throw unused();
    }

    @Override
    protected void accept(SocketImpl s) {
        throw unused();
    }

    @Override
    protected InputStream getInputStream() {
        throw unused();
    }

    @Override
    protected OutputStream getOutputStream() {
        throw unused();
    }

    @Override
    protected int available() {
        throw unused();
    }

    @Override
    protected void close() {
    }

    @Override
    protected void sendUrgentData(int data) {
        throw unused();
    }

    @Override
    public void setOption(int optionId, Object value) {
        throw unused();
    }

    @Override
    public Object getOption(int optionId) {
        throw unused();
    }
}
