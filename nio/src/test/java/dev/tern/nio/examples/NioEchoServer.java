package dev.tern.nio.examples;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * A plain NIO echo server with one selector, written for the JDK's provider and nothing else: under
 * {@code tern exec} the same bytecode serves its clients through Tern.
 *
 * <pre>
 *   ./tern exec --link afpacket:tern0 --ip 198.18.0.2/24 -- java -cp CLASSES dev.tern.nio.examples.NioEchoServer 7007
 * </pre>
 */
public final class NioEchoServer {
    private NioEchoServer() {
    }

    public static void main(String[] args) throws IOException {
        final int port = args.length > 0 ? Integer.parseInt(args[0]) : 7007;
        try (Selector selector = Selector.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(port));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println("listening on " + server.getLocalAddress() + " via " + selector.provider().getClass().getName());
            System.out.flush();
            while (true) {
                selector.select();
                for (Iterator<SelectionKey> keys = selector.selectedKeys().iterator(); keys.hasNext(); ) {
                    final SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isAcceptable()) {
                        final SocketChannel client = server.accept();
                        if (client != null) {
                            client.configureBlocking(false);
                            client.register(selector, SelectionKey.OP_READ, ByteBuffer.allocateDirect(65536));
                        }
                    } else {
                        echo(key);
                    }
                }
            }
        }
    }

    /** Reads what fits in the key's buffer, writes what it can; waits for room to write before it reads more. */
    private static void echo(SelectionKey key) throws IOException {
        final SocketChannel channel = (SocketChannel) key.channel();
        final ByteBuffer pending = (ByteBuffer) key.attachment();
        try {
            if (key.isReadable() && channel.read(pending) < 0) {
                pending.flip();
                while (pending.hasRemaining()) {
                    channel.write(pending);
                }
                channel.close();
                return;
            }
            pending.flip();
            channel.write(pending);
            pending.compact();
            key.interestOps((pending.position() > 0 ? SelectionKey.OP_WRITE : 0) | (pending.hasRemaining() ? SelectionKey.OP_READ : 0));
        } catch (IOException e) {
            channel.close();
        }
    }
}
