/** Socket plumbing shared by the transports: the off-heap single-producer/single-consumer byte ring. */
package dev.tern.core.io;
