//! A graph's edges grouped by one end in one array, for the passes that visit every
//! node's edges (Kahn's order, the clocks). The graph's own lists chain each edge to the
//! next through its edge array, a cache miss per edge at a million nodes; here a node's
//! edges are consecutive. Each list keeps the graph's own order (newest edge first), so
//! the passes visit edges exactly as they would through the graph.

use petgraph::Direction;
use petgraph::graph::DiGraph;

pub(super) struct Adjacency {
    /// Node `n`'s edges are `ends[starts[n]..starts[n + 1]]`.
    starts: Vec<u32>,
    /// The other end of each edge.
    ends: Vec<u32>,
}

impl Adjacency {
    /// Each node's edges in `direction`: outgoing ones list their targets, incoming
    /// ones their sources.
    pub(super) fn new<N, E>(graph: &DiGraph<N, E, u32>, direction: Direction) -> Self {
        let ends_of = |edge: &petgraph::graph::Edge<E, u32>| match direction {
            Direction::Outgoing => (edge.source().index(), edge.target().index() as u32),
            Direction::Incoming => (edge.target().index(), edge.source().index() as u32),
        };
        let mut starts = vec![0u32; graph.node_count() + 1];
        for edge in graph.raw_edges() {
            starts[ends_of(edge).0 + 1] += 1;
        }
        for node in 0..graph.node_count() {
            starts[node + 1] += starts[node];
        }
        let mut next = starts.clone();
        let mut ends = vec![0u32; graph.edge_count()];
        // Newest first, as the graph lists a node's edges.
        for edge in graph.raw_edges().iter().rev() {
            let (node, end) = ends_of(edge);
            ends[next[node] as usize] = end;
            next[node] += 1;
        }
        Adjacency { starts, ends }
    }

    /// The other ends of `node`'s edges.
    pub(super) fn of(&self, node: usize) -> &[u32] {
        &self.ends[self.starts[node] as usize..self.starts[node + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use petgraph::graph::NodeIndex;
    use petgraph::visit::EdgeRef;

    use super::*;

    #[test]
    fn each_node_lists_its_edges_as_the_graph_does() {
        let mut graph: DiGraph<(), (), u32> = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..5).map(|_| graph.add_node(())).collect();
        for (a, b) in [(0, 1), (0, 2), (1, 2), (3, 2), (0, 4), (2, 4), (4, 0)] {
            graph.add_edge(nodes[a], nodes[b], ());
        }
        let outgoing = Adjacency::new(&graph, Direction::Outgoing);
        let incoming = Adjacency::new(&graph, Direction::Incoming);
        for &node in &nodes {
            let targets: Vec<u32> = graph.edges(node).map(|e| e.target().index() as u32).collect();
            let sources: Vec<u32> = graph
                .edges_directed(node, Direction::Incoming)
                .map(|e| e.source().index() as u32)
                .collect();
            assert_eq!(outgoing.of(node.index()), targets, "out of {node:?}");
            assert_eq!(incoming.of(node.index()), sources, "into {node:?}");
        }
        assert_eq!(outgoing.of(0), [4, 2, 1]);
    }
}
