"""Models localeval downloads: the catalog and the checked store (`store`: judges, the embedding
model), and the sentence embeddings answer_relevancy computes with one (`embedding`). The verifier,
which ships inside the package, is `localeval.verifier`."""
