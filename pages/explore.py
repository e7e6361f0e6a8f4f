import streamlit as st
st.title("explore")
