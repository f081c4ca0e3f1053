/** Off-heap memory: the frame buffer slab, big-endian access and the flyweight base every header builds on. */
package dev.tern.core.memory;
