package dev.tern.conformance.interop.programs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * A plain NIO client of two servers on one selector: {@code MixedSelectorClient HOST1 PORT1 HOST2 PORT2 BYTES}
 * connects to both without blocking, sends BYTES to each, shuts down output, and prints "done" once both are sent.
 * Under {@code tern exec} the rules decide which connection goes through Tern and which through the kernel; the
 * program cannot tell.
 */
public final class MixedSelectorClient {
    private MixedSelectorClient() {
    }

    public static void main(String[] args) throws IOException {
        final int bytes = Integer.parseInt(args[4]);
        try (Selector selector = Selector.open()) {
            for (int i = 0; i < 2; i++) {
                final SocketChannel channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.connect(new InetSocketAddress(args[2 * i], Integer.parseInt(args[2 * i + 1])));
                channel.register(selector, SelectionKey.OP_CONNECT, new int[] {bytes});
            }
            final ByteBuffer data = ByteBuffer.allocateDirect(65536);
            int finished = 0;
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (finished < 2 && System.nanoTime() - deadline < 0) {
                selector.select(1000);
                for (var it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    final SelectionKey key = it.next();
                    it.remove();
                    final SocketChannel channel = (SocketChannel) key.channel();
                    final int[] left = (int[]) key.attachment();
                    if (key.isConnectable()) {
                        channel.finishConnect();
                        key.interestOps(SelectionKey.OP_WRITE);
                        continue;
                    }
                    data.clear().limit(Math.min(data.capacity(), left[0]));
                    left[0] -= channel.write(data);
                    if (left[0] == 0) {
                        channel.shutdownOutput();
                        key.cancel();
                        finished++;
                    }
                }
            }
            if (finished == 2) {
                System.out.println("done");
            } else {
                System.out.println("unfinished " + finished);
                for (SelectionKey key : selector.keys()) {
                    System.out.println("  " + key.channel() + " left " + ((int[]) key.attachment())[0] + " interest "
                        + (key.isValid() ? key.interestOps() + " ready " + key.readyOps() : "cancelled"));
                }
            }
        }
    }
}
