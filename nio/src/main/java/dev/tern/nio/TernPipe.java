package dev.tern.nio;

import dev.tern.stack.SelectableSocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;

/**
 * A {@link Pipe} of the kernel's, wrapped so that its ends can be registered with a Tern selector next to Tern's
 * channels (a pipe never goes through Tern: it is between two threads of this process).
 */
final class TernPipe extends Pipe {
    private final Source source;
    private final Sink sink;

    TernPipe(TernSelectorProvider provider, Pipe kernel) {
        this.source = new Source(provider, kernel.source());
        this.sink = new Sink(provider, kernel.sink());
    }

    @Override
    public SourceChannel source() {
        return source;
    }

    @Override
    public SinkChannel sink() {
        return sink;
    }

    private static final class Source extends Pipe.SourceChannel implements TernChannel {
        private final Pipe.SourceChannel kernel;
        private final ChannelKeys keys = new ChannelKeys();

        Source(TernSelectorProvider provider, Pipe.SourceChannel kernel) {
            super(provider);
            this.kernel = kernel;
        }

        @Override
        public int read(ByteBuffer destination) throws IOException {
            return kernel.read(destination);
        }

        @Override
        public long read(ByteBuffer[] destinations, int offset, int length) throws IOException {
            return kernel.read(destinations, offset, length);
        }

        @Override
        public long read(ByteBuffer[] destinations) throws IOException {
            return kernel.read(destinations);
        }

        @Override
        protected void implCloseSelectableChannel() throws IOException {
            kernel.close();
        }

        @Override
        protected void implConfigureBlocking(boolean block) throws IOException {
            kernel.configureBlocking(block);
        }

        @Override
        public SelectableSocket ternSocket() {
            return null;
        }

        @Override
        public SelectableChannel kernelChannel() {
            return kernel;
        }

        @Override
        public int translateReadyOps(int ternReady, int interestOps) {
            return 0;
        }

        @Override
        public int ternInterest(int interestOps) {
            return 0;
        }

        @Override
        public ChannelKeys keys() {
            return keys;
        }
    }

    private static final class Sink extends Pipe.SinkChannel implements TernChannel {
        private final Pipe.SinkChannel kernel;
        private final ChannelKeys keys = new ChannelKeys();

        Sink(TernSelectorProvider provider, Pipe.SinkChannel kernel) {
            super(provider);
            this.kernel = kernel;
        }

        @Override
        public int write(ByteBuffer source) throws IOException {
            return kernel.write(source);
        }

        @Override
        public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
            return kernel.write(sources, offset, length);
        }

        @Override
        public long write(ByteBuffer[] sources) throws IOException {
            return kernel.write(sources);
        }

        @Override
        protected void implCloseSelectableChannel() throws IOException {
            kernel.close();
        }

        @Override
        protected void implConfigureBlocking(boolean block) throws IOException {
            kernel.configureBlocking(block);
        }

        @Override
        public SelectableSocket ternSocket() {
            return null;
        }

        @Override
        public SelectableChannel kernelChannel() {
            return kernel;
        }

        @Override
        public int translateReadyOps(int ternReady, int interestOps) {
            return 0;
        }

        @Override
        public int ternInterest(int interestOps) {
            return 0;
        }

        @Override
        public ChannelKeys keys() {
            return keys;
        }
    }
}
