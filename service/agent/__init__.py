"""The built-in agent behind ``agrag ask``: Haystack's ``Agent`` over the shared evidence tools."""
