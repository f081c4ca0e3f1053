/** The memory wire: stacks joined in one process, with seeded impairments on virtual or real time. */
package dev.tern.ethernet.memory;
