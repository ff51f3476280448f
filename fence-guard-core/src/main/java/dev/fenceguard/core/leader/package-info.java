/**
 * Leader election on any lock backend, fenced: a leader's term is the fence of its lock, strictly
 * greater than every earlier term, so a resource that checks fences refuses the writes of a deposed
 * leader that has not yet noticed. Start with {@link dev.fenceguard.core.leader.LeaderElection}.
 *
 * @since 0.1
 */
package dev.fenceguard.core.leader;
