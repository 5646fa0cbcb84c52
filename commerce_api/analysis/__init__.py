"""The analysis job types: review sentiment, return classification, listing optimization
and LLM visibility."""
