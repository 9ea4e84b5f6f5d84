"""The app's UI helpers: the only place besides pages/ where streamlit and plotly live."""
