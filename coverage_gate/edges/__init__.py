"""The program's edges to the machine: contract files and atomic writes, standard streams, git
(trees and blobs at the revision), the revision's content, the review's scope."""
