"""What the app says: the stage registry, explanations, practice bank and cheat sheet. Never imports streamlit."""
