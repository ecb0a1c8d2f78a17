"""What the pipeline's index stores share: the protocol of the rows they keep in a database
(`rows`, implemented in SQL by `storage.indexes`), their common base (`store`), and the words
a query searches the database's full-text index for (`words`).
"""
